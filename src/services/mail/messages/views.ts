/**
 * The API shapes of messages and suppressions, and the data of their events: one serialiser
 * per record, typed by its TypeBox schema (schemas.ts), so the documented and the served
 * shape are one declaration.
 */
import type { Static } from "@sinclair/typebox";
import type { Message, MessageBody, Suppression } from "./schemas";
import type { MessageRow, SuppressionRow } from "./store";

/** The metadata of a message: its row without the search folds, queue and lease columns. */
export type MessageView = Static<typeof Message>;
export type MessageBodyView = Static<typeof MessageBody>;
export type SuppressionView = Static<typeof Suppression>;

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

/** A message's content; `body` null: not shown (the workspace redacts bodies). */
export const messageBodyView = (r: MessageRow, body: { html: string | null; text: string | null } | null): MessageBodyView =>
  body === null
    ? { id: r.id, subject: r.subject, body_html: null, body_text: null, redacted: true }
    : { id: r.id, subject: r.subject, body_html: body.html, body_text: body.text, redacted: false };

/** The data of an email.* event: the metadata without the SMTP transcript. */
export function messageEventData<X extends object = object>(r: MessageRow, extra: X = {} as X) {
  const { smtp_transcript: _, ...v } = messageView(r);
  return { ...v, ...extra };
}

export const suppressionView = (r: SuppressionRow): SuppressionView => ({ email: r.email, reason: r.reason, source_message_id: r.source_message_id, created_at: r.created_at });
