/** TypeBox models of the mailboxes part (mailboxes and received messages). */
import { t } from "../../../core/schema";
import { ErrorBody, Pagination } from "../../../access/schemas";
import { Uuid } from "../schemas";
import { DISPLAY_NAME_MAX, FILTER_MAX, LIST_DEFAULT, LIST_MAX, LOCAL_PART_MAX, RETENTION_DEFAULT, RETENTION_MAX, RETENTION_MIN } from "./limits";

export { ErrorBody };
const N = t.Nullable;

export const Mailbox = t.Object({
  id: t.String({ format: "uuid" }),
  seq_id: t.String({ description: "Sequential per workspace" }),
  workspace_id: t.String(),
  domain_id: t.String({ format: "uuid" }),
  local_part: t.String(),
  address: t.String({ description: "local_part@domain" }),
  display_name: N(t.String()),
  owner_account_id: N(t.String()),
  retention_days: t.Integer(),
  status: t.UnionEnum(["active", "disabled"], { description: "active: accepts mail; disabled: RCPT answers 550" }),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});

export const MailboxList = t.Object({ data: t.Array(Mailbox), pagination: Pagination });

export const MailboxCreate = t.Object({
  domain_id: Uuid("A domain of the workspace with intent receive or send_receive"),
  local_part: t.String({ description: `RFC 5321 dot-string, 1-${LOCAL_PART_MAX} characters; unique per domain ignoring case` }),
  display_name: t.Optional(N(t.String({ maxLength: DISPLAY_NAME_MAX * 4 }))),
  retention_days: t.Optional(t.Integer({ description: `${RETENTION_MIN}-${RETENTION_MAX}, default ${RETENTION_DEFAULT}` })),
});

export const MailboxPatch = t.Object({
  display_name: t.Optional(N(t.String({ maxLength: DISPLAY_NAME_MAX * 4 }))),
  retention_days: t.Optional(t.Integer({ description: `${RETENTION_MIN}-${RETENTION_MAX}` })),
  status: t.Optional(t.String({ description: "active | disabled" })),
});

export const MailboxListQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: `1-${LIST_MAX}, default ${LIST_DEFAULT}` })),
  cursor: t.Optional(t.String()),
  domain_id: t.Optional(Uuid("Only the mailboxes of this domain")),
  status: t.Optional(t.String({ description: "active | disabled" })),
});

export const Attachment = t.Object({
  position: t.Integer({ description: "0-based, the order of the attachments in the message" }),
  filename: N(t.String()),
  content_id: N(t.String()),
  content_type: t.String(),
  size_bytes: t.Integer(),
  sha256: t.String({ description: "hex" }),
});

const receivedFields = {
  id: t.String({ format: "uuid" }),
  mailbox_id: t.String({ format: "uuid" }),
  seq_id: t.String({ description: "Sequential per mailbox" }),
  raw_object_key: t.String(),
  envelope_from: t.String({ description: "MAIL FROM; empty for bounces (null reverse-path)" }),
  envelope_to: t.String({ description: "The RCPT TO address that reached this mailbox" }),
  from_address: t.String(),
  from_local: t.String(),
  from_domain: t.String(),
  to_addresses: t.Array(t.String()),
  cc_addresses: t.Array(t.String()),
  subject: t.String(),
  body_preview: N(t.String({ description: "First 512 bytes of the plain text; null without mail.message.body.read" })),
  rfc822_message_id: N(t.String()),
  size_bytes: t.Integer(),
  spam_score: t.Integer(),
  spam_verdict: t.UnionEnum(["clean", "suspicious", "spam"]),
  spam_rules: t.Array(t.Object({ rule: t.String(), score: t.Integer() })),
  spf_result: t.String(),
  dkim_result: t.String(),
  dmarc_result: t.String(),
  quarantined: t.Boolean(),
  received_at: t.String({ format: "date-time" }),
  read_at: N(t.String({ format: "date-time" })),
  deleted_at: N(t.String({ format: "date-time" })),
};

export const ReceivedSummary = t.Object(receivedFields);
export const Received = t.Object({ ...receivedFields, attachments: t.Array(Attachment) });
export const ReceivedList = t.Object({ data: t.Array(ReceivedSummary), pagination: Pagination });

export const ReceivedListQuery = t.Object({
  from: t.Optional(t.String({ description: `Case-insensitive substring of the From name and address; at most ${FILTER_MAX} characters` })),
  subject: t.Optional(t.String({ description: `Case-insensitive substring of the subject; at most ${FILTER_MAX} characters` })),
  since: t.Optional(t.String({ description: "Received at or after (YYYY-MM-DD or ISO 8601 date-time)" })),
  until: t.Optional(t.String({ description: "Received before (YYYY-MM-DD or ISO 8601 date-time)" })),
  unread: t.Optional(t.Boolean({ description: "true: unread only; false: read only" })),
  limit: t.Optional(t.QueryInteger({ description: `1-${LIST_MAX}, default ${LIST_DEFAULT}` })),
  cursor: t.Optional(t.String({ description: "next_cursor of the previous page; it keeps that page's filters" })),
});
