/** TypeBox models of the mail sandbox part's routes (the sandbox domain and the dev outbox). */
import { t } from "../../../core/schema";
import { ErrorBody, Pagination } from "../../../access/schemas";
import { OUTBOX_KEEP, OUTBOX_LIST_DEFAULT, OUTBOX_LIST_MAX } from "./service";

export { ErrorBody };

const item = {
  id: t.String({ format: "uuid" }),
  message_id: t.String({ format: "uuid", description: "The message in the message log (GET /messages/{id}: status delivered, sandbox true, delivered_to outbox)" }),
  domain_id: t.Nullable(t.String({ description: "The sandbox domain that sent it" })),
  from: t.String({ description: 'The From header as sent ("Name <address>" or the address)' }),
  to: t.String(),
  subject: t.String(),
  created_at: t.String({ format: "date-time", description: "When the delivery worker caught it" }),
};

export const OutboxItem = t.Object(item);
export const OutboxList = t.Object({ data: t.Array(OutboxItem), pagination: Pagination });
export const OutboxMessage = t.Object({
  ...item,
  headers: t.Record(t.String(), t.String(), { description: "The extra headers the send gave (List-Unsubscribe, ...)" }),
  html: t.Nullable(t.String({ description: "null without mail.message.body.read, or when the workspace redacts bodies" })),
  text: t.Nullable(t.String({ description: "null without mail.message.body.read, or when the workspace redacts bodies" })),
  redacted: t.Boolean({ description: "No bodies were kept: the workspace's redact_bodies was on when it was caught" }),
  body_visible: t.Boolean({ description: "The caller holds mail.message.body.read (html and text are null otherwise)" }),
});
export const OutboxQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: `1-${OUTBOX_LIST_MAX}, default ${OUTBOX_LIST_DEFAULT}` })),
  cursor: t.Optional(t.String({ description: "next_cursor of the previous page" })),
});

export const OUTBOX_NOTE =
  "The dev outbox: what the workspace's sandbox domain sent to addresses that are not active mailboxes of this instance, caught here and never sent " +
  `(for trying Bunker out, not for production). The newest ${OUTBOX_KEEP.toLocaleString("en")} per workspace are kept; a captured message goes with its message (DELETE /messages?recipient=) and its workspace.`;
