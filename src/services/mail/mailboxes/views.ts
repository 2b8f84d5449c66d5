/**
 * What the mailbox routes serve, one serialiser per record: rows turned into the records of
 * schemas.ts, whose TypeBox models are the types too (one declaration for the documented and
 * the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type { AttachmentInfo } from "../parse";
import type { Mailbox, Received, ReceivedSummary } from "./schemas";
import type { MailboxRow, ReceivedRow } from "./store";

export type MailboxView = Static<typeof Mailbox>;
/** A received message in a list: no attachment manifest. */
export type ReceivedSummaryView = Static<typeof ReceivedSummary>;
export type ReceivedView = Static<typeof Received>;

/** `fqdn`: the mailbox domain's name, which the address is on. */
export const mailboxView = (r: MailboxRow, fqdn: string): MailboxView => ({
  id: r.id,
  seq_id: String(r.seq),
  workspace_id: r.workspace_id,
  domain_id: r.domain_id,
  local_part: r.local_part,
  address: `${r.local_part}@${fqdn}`,
  display_name: r.display_name,
  owner_account_id: r.owner_account_id,
  retention_days: r.retention_days,
  status: r.status,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** `withBody`: the caller may read bodies (mail.message.body.read), else body_preview is null. */
export const receivedSummaryView = (r: ReceivedRow, withBody: boolean): ReceivedSummaryView => ({
  id: r.id,
  mailbox_id: r.mailbox_id,
  seq_id: String(r.seq),
  raw_object_key: r.raw_object_key,
  envelope_from: r.envelope_from,
  envelope_to: r.envelope_to,
  from_address: r.from_address,
  from_local: r.from_local,
  from_domain: r.from_domain,
  to_addresses: JSON.parse(r.to_addresses) as string[],
  cc_addresses: JSON.parse(r.cc_addresses) as string[],
  subject: r.subject,
  body_preview: withBody ? r.body_preview : null,
  rfc822_message_id: r.rfc822_message_id,
  size_bytes: r.size_bytes,
  spam_score: r.spam_score,
  spam_verdict: r.spam_verdict as ReceivedView["spam_verdict"],
  spam_rules: JSON.parse(r.spam_rules) as { rule: string; score: number }[],
  spf_result: r.spf_result,
  dkim_result: r.dkim_result,
  dmarc_result: r.dmarc_result,
  quarantined: r.quarantined === 1,
  received_at: r.received_at,
  read_at: r.read_at,
  deleted_at: r.deleted_at,
});

/** One received message with its attachment manifest. */
export const receivedView = (r: ReceivedRow, withBody: boolean): ReceivedView => ({
  ...receivedSummaryView(r, withBody),
  attachments: (JSON.parse(r.attachments) as AttachmentInfo[] | null) ?? [],
});
