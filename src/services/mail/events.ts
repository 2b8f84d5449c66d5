/**
 * Webhook events of the mail service: the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import type { ModuleContext } from "../../kernel/module";
import { Type, type TProperties } from "@sinclair/typebox";
import { defineWebhookProduct, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../../kernel/webhooks";
import { Message, Suppression } from "./messages/schemas";

/** The data of every email.* event: the message without its SMTP transcript, and the event's own fields. */
const { smtp_transcript: _transcript, ...messageFields } = Message.properties;
const MessageEvent = <P extends TProperties>(extra: P) => Type.Object({ ...messageFields, ...extra });
const Str = Type.String();
const SuppressionEvent = <P extends TProperties>(extra: P) => Type.Object({ workspace_id: Str, ...Suppression.properties, ...extra });
const DomainEvent = <P extends TProperties>(extra: P) =>
  Type.Object({
    id: Str,
    seq_id: Str,
    workspace_id: Str,
    fqdn: Str,
    intent: Type.String({ description: "send | receive | both" }),
    status: Type.String({ description: "pending | active | failed" }),
    verified_at: Type.Union([Str, Type.Null()]),
    last_dns_check_at: Type.Union([Str, Type.Null()]),
    created_at: Str,
    sandbox: Type.Boolean(),
    ...extra,
  });

/** The `data` of every email.* event: the message's metadata (MessageView without smtp_transcript). */
const message = (over: Record<string, unknown> = {}) => ({
  id: "0192f400-1a2b-7c3d-8e4f-5a6b7c8d9e0f",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  domain_id: "0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f",
  from_address: "hello@mail.acme.example",
  to_address: "ada@example.com",
  subject: "Welcome to Acme",
  template_name: "welcome",
  status: "queued",
  spf_result: null,
  dkim_result: null,
  dmarc_result: null,
  bounce_code: null,
  bounce_detail: null,
  created_at: T0,
  sent_at: null,
  delivered_at: null,
  deferred_at: null,
  deferral_count: 0,
  sandbox: false,
  delivered_to: null,
  ...over,
});

const domain = (over: Record<string, unknown> = {}) => ({
  id: "0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  fqdn: "mail.acme.example",
  intent: "send",
  status: "active",
  verified_at: T1,
  last_dns_check_at: T1,
  created_at: T0,
  sandbox: false,
  ...over,
});

const EVENTS = [
  { type: "email.sent",
    data: MessageEvent({}), description: "The relay or the recipient's MX accepted the message (not proof of delivery).", example: message({ status: "sent", sent_at: T1 }) },
  {
    type: "email.delivered",
    data: MessageEvent({}),
    description:
      "Recipient-side evidence shows the message was delivered; for a sandbox domain's message (sandbox: true), delivered_to says where it went: mailbox (an active mailbox of this instance) or outbox (the dev outbox).",
    example: message({ status: "delivered", sent_at: T0, delivered_at: T1 }),
  },
  {
    type: "email.delivery_delayed",
    data: MessageEvent({ next_attempt_at: Type.Union([Str, Type.Null()], { description: "null: no further attempt is scheduled by Bunker" }) }),
    description: "The receiving server answered 4xx; the message is retried after 1, 5 and 30 minutes, 2 and 6 hours (then every 6 hours), and fails after 72 hours.",
    example: {
      ...message({ status: "deferred", deferred_at: T1, deferral_count: 1, bounce_code: "4.7.1", bounce_detail: "451 4.7.1 Greylisted, try again later" }),
      next_attempt_at: "2026-11-02T09:21:41.000Z",
    },
  },
  {
    type: "email.bounced",
    data: MessageEvent({ bounce_type: Type.String({ description: "hard" }), bounced_at: Str }),
    description: "The receiving server refused the message permanently (5xx) or a bounce report came back; the address is suppressed.",
    example: { ...message({ status: "bounced", bounce_code: "5.1.1", bounce_detail: "550 5.1.1 User unknown" }), bounce_type: "hard", bounced_at: T1 },
  },
  {
    type: "email.complained",
    data: MessageEvent({ complained_at: Str }),
    description: "The recipient reported the message as spam (feedback loop); the address is suppressed.",
    example: { ...message({ status: "complained", sent_at: T0 }), complained_at: T1 },
  },
  {
    type: "email.failed",
    data: MessageEvent({ error: Str, failed_at: Str }),
    description: "The message will not be sent: deferred for 72 hours without success, or refused before sending.",
    example: { ...message({ status: "failed", deferral_count: 9, deferred_at: T0 }), error: "gave up after 72 hours of deferrals", failed_at: T1 },
  },
  {
    type: "email.received",
    data: Type.Object({ mailbox_id: Type.String(), message_id: Type.String(), seq_id: Type.String(), envelope_to: Type.String(), from_address: Type.String(), subject: Type.String(), spam_verdict: Type.String(), quarantined: Type.Boolean(), received_at: Type.String() }),
    description: "A message arrived in a mailbox (one event per mailbox it reached). No body: read it with GET /mailboxes/{mailbox_id}/messages/{message_id}.",
    example: {
      mailbox_id: "0192f401-2b3c-7d4e-8f50-6a7b8c9d0e1f",
      message_id: "0192f402-3c4d-7e5f-8061-7b8c9d0e1f2a",
      seq_id: "1",
      envelope_to: "support@in.acme.example",
      from_address: "ada@example.com",
      subject: "Question about my order",
      spam_verdict: "clean",
      quarantined: false,
      received_at: T1,
    },
  },
  {
    type: "suppression.created",
    data: SuppressionEvent({}),
    description: "An address was added to the workspace's suppression list (bounce, complaint, unsubscribe or by hand); sends to it are refused.",
    example: { workspace_id: "ws_0192f0c4e5b87d21a9c3", email: "ada@example.com", reason: "bounce", source_message_id: "0192f400-1a2b-7c3d-8e4f-5a6b7c8d9e0f", created_at: T1 },
  },
  {
    type: "suppression.deleted",
    data: SuppressionEvent({ deleted_at: Str }),
    description: "An address was removed from the suppression list; sends to it are accepted again.",
    example: { workspace_id: "ws_0192f0c4e5b87d21a9c3", email: "ada@example.com", reason: "manual", source_message_id: null, created_at: T0, deleted_at: T1 },
  },
  { type: "domain.created",
    data: DomainEvent({}), description: "A sending or receiving domain was added (status pending until its DNS records are seen).", example: domain({ seq_id: "1", status: "pending", verified_at: null, last_dns_check_at: null, created_at: T0 }) },
  {
    type: "domain.updated",
    data: DomainEvent({ previous_status: Str, failed_checks: Type.Array(Type.Object({ purpose: Str, type: Str, host: Str })) }),
    description: "A domain's status changed (pending to active or failed), or the set of its DNS records found missing changed.",
    example: { ...domain({ seq_id: "1", created_at: T0 }), previous_status: "pending", failed_checks: [] },
  },
  { type: "domain.deleted",
    data: DomainEvent({ deleted_at: Str }), description: "A domain was deleted.", example: { ...domain({ seq_id: "1", created_at: T0 }), deleted_at: T1 } },
] as const;

export const MAIL_WEBHOOKS = defineWebhookProduct({
  product: "mail",
  label: "Mail",
  legacyHeader: "x-mail-signature",
  events: EVENTS,
});

/** The module's context with its emit typed by these declarations. */
export type MailContext = ModuleContext<typeof MAIL_WEBHOOKS>;
