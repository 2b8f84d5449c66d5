/**
 * The ids and keys the mail routes take in their paths, queries and bodies, in one place for
 * every part: a malformed one is 400 VALIDATION_ERROR naming the field before anything is
 * looked up (after the credential), a well-formed one that names nothing is 404, and the
 * OpenAPI shows the shape.
 */
import type { TString } from "@sinclair/typebox";
import { t } from "../../core/schema";
import { UUID_PATTERN, Uuid } from "../../access/schemas";
export { UUID_PATTERN, Uuid };

/** Every mail row id (domains, messages, mailboxes, received messages) and the workspace's id are UUIDs, any case (rows hold them lower-case). */
const WorkspaceId = Uuid("The workspace's id");
/** An attachment's 0-based position in the received message's manifest. */
const Position = t.String({ pattern: "^[0-9]{1,4}$", description: "0-based position in the attachments manifest" });

/**
 * Path parameters: workspace_id plus the named ones. The keys whose rule a part owns (a
 * template's name, a suppressed address) are built with it in that part's schemas.ts, so
 * this file builds on no part.
 */
export const params = <P extends Record<string, TString>>(more: P) => t.Object({ workspace_id: WorkspaceId, ...more });

export const WorkspaceParams = params({});
export const DomainParams = params({ domain_id: Uuid("The domain's id") });
export const MessageParams = params({ id: Uuid("The message's id") });
export const MailboxParams = params({ id: Uuid("The mailbox's id") });
export const ReceivedParams = params({ id: Uuid("The mailbox's id"), mid: Uuid("The received message's id") });
export const AttachmentParams = params({ id: Uuid("The mailbox's id"), mid: Uuid("The received message's id"), position: Position });
