/** The API shapes of messages and suppressions, and the data of their events. */
import type { MessageRow, SuppressionReason, SuppressionRow } from "./store";

/** The metadata of a message: its row without the search folds, queue and lease columns. */
export type MessageView = Pick<
  MessageRow,
  | "id"
  | "workspace_id"
  | "domain_id"
  | "from_address"
  | "to_address"
  | "subject"
  | "template_name"
  | "status"
  | "smtp_transcript"
  | "spf_result"
  | "dkim_result"
  | "dmarc_result"
  | "bounce_code"
  | "bounce_detail"
  | "created_at"
  | "sent_at"
  | "delivered_at"
  | "deferred_at"
  | "deferral_count"
  | "delivered_to"
> & { sandbox: boolean };

export interface MessageBodyView {
  id: string;
  subject: string;
  body_html: string | null;
  body_text: string | null;
  redacted: boolean;
}

export interface SuppressionView {
  email: string;
  reason: SuppressionReason;
  source_message_id: string | null;
  created_at: string;
}

export const foldEmail = (s: string) => s.trim().toLowerCase();

export function messageView(r: MessageRow): MessageView {
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    domain_id: r.domain_id,
    from_address: r.from_address,
    to_address: r.to_address,
    subject: r.subject,
    template_name: r.template_name,
    status: r.status,
    smtp_transcript: r.smtp_transcript,
    spf_result: r.spf_result,
    dkim_result: r.dkim_result,
    dmarc_result: r.dmarc_result,
    bounce_code: r.bounce_code,
    bounce_detail: r.bounce_detail,
    created_at: r.created_at,
    sent_at: r.sent_at,
    delivered_at: r.delivered_at,
    deferred_at: r.deferred_at,
    deferral_count: Number(r.deferral_count),
    sandbox: Number(r.sandbox) === 1,
    delivered_to: r.delivered_to,
  };
}

/** The data of an email.* event: the metadata without the SMTP transcript. */
export function messageEventData<X extends object = object>(r: MessageRow, extra: X = {} as X) {
  const { smtp_transcript: _, ...v } = messageView(r);
  return { ...v, ...extra };
}

export const suppressionView = (r: SuppressionRow): SuppressionView => ({ email: r.email, reason: r.reason, source_message_id: r.source_message_id, created_at: r.created_at });
