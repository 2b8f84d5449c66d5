/**
 * The list query of the message log: filter parsing and the store filter, shared by the
 * paged list (log.ts) and the CSV export (export.ts), so both read the same filters the same
 * way. Page sizes and the cursor error are shared with the suppression list.
 */
import { badRequest } from "../../../core/errors";
import type * as store from "./store";
import { MESSAGE_STATUSES, type MessageStatus } from "./store";

export const LIST_DEFAULT = 20;
export const LIST_MAX = 100;
export const SUBJECT_CONTAINS_MAX = 200;
export const RECIPIENT_MAX = 320;
export const TEMPLATE_MAX = 64;

export interface MessageQuery {
  limit?: unknown;
  cursor?: string;
  recipient?: string;
  template?: string;
  status?: string;
  subject_contains?: string;
}

export interface Filters {
  recipient: string | null;
  template: string | null;
  status: MessageStatus | null;
  subject: string | null;
}

const isStatus = (v: unknown): v is MessageStatus => typeof v === "string" && (MESSAGE_STATUSES as readonly string[]).includes(v);
const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
export const badCursor = (reason: string) => badRequest("Malformed cursor", [{ field: "cursor", reason }], "INVALID_CURSOR");

export function parseFilters(q: MessageQuery): Filters {
  const details: { field: string; reason: string }[] = [];
  const opt = (v: string | undefined) => (v === undefined || v === "" ? null : v);
  const recipient = opt(q.recipient);
  if (recipient !== null && recipient.length > RECIPIENT_MAX) details.push({ field: "recipient", reason: `at most ${RECIPIENT_MAX} characters` });
  const template = opt(q.template);
  if (template !== null && template.length > TEMPLATE_MAX) details.push({ field: "template", reason: `at most ${TEMPLATE_MAX} characters` });
  const status = opt(q.status);
  if (status !== null && !isStatus(status)) details.push({ field: "status", reason: `one of ${MESSAGE_STATUSES.join(", ")}` });
  const subject = opt(q.subject_contains);
  if (subject !== null && Array.from(subject).length > SUBJECT_CONTAINS_MAX) details.push({ field: "subject_contains", reason: `at most ${SUBJECT_CONTAINS_MAX} characters` });
  if (details.length) throw badRequest("Invalid message filters", details);
  return { recipient, template, status: status as MessageStatus | null, subject };
}

export function filterOf(wsId: string, f: Filters, before: { created_at: string; id: string } | null, limit: number): store.MessageFilter {
  return {
    workspaceId: wsId,
    recipient: f.recipient,
    template: f.template,
    status: f.status,
    subjectPattern: f.subject === null ? null : likePattern(f.subject),
    before,
    limit,
  };
}
