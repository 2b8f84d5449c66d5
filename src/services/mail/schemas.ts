/**
 * The ids and keys the mail routes take in their paths, queries and bodies, in one place for
 * every part: a malformed one is 400 VALIDATION_ERROR naming the field before anything is
 * looked up (after the credential), a well-formed one that names nothing is 404, and the
 * OpenAPI shows the shape.
 */
import type { TString } from "@sinclair/typebox";
import { t } from "../../core/schema";
import { NAME_RE } from "./content/limits";
import { EMAIL_MAX, EMAIL_RE } from "./messages/suppressions";
import { UUID_PATTERN, Uuid } from "../../access/schemas";
export { UUID_PATTERN, Uuid };

/** Every mail row id (domains, messages, mailboxes, received messages) and the workspace's id are UUIDs, any case (rows hold them lower-case). */
const WorkspaceId = Uuid("The workspace's id");
/** A template's name, the key of the /templates/{name} routes (the rule a template is saved under). */
const TemplateName = t.String({ pattern: NAME_RE.source, description: "1-64 of lowercase letters, digits, underscore and hyphen" });
/** A suppressed address: only addresses of this form are ever suppressed (added, or sent to and bounced). */
const SuppressedEmail = t.String({ pattern: EMAIL_RE.source, maxLength: EMAIL_MAX, description: "The address (any case)" });
/** An attachment's 0-based position in the received message's manifest. */
const Position = t.String({ pattern: "^[0-9]{1,4}$", description: "0-based position in the attachments manifest" });

/** Path parameters: workspace_id plus the named ones. */
const params = <P extends Record<string, TString>>(more: P) => t.Object({ workspace_id: WorkspaceId, ...more });

export const WorkspaceParams = params({});
export const DomainParams = params({ domain_id: Uuid("The domain's id") });
export const MessageParams = params({ id: Uuid("The message's id") });
export const SuppressionParams = params({ email: SuppressedEmail });
export const TemplateParams = params({ name: TemplateName });
export const MailboxParams = params({ id: Uuid("The mailbox's id") });
export const ReceivedParams = params({ id: Uuid("The mailbox's id"), mid: Uuid("The received message's id") });
export const AttachmentParams = params({ id: Uuid("The mailbox's id"), mid: Uuid("The received message's id"), position: Position });
