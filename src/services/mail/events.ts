/**
 * Webhook events of the mail service: the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import { defineWebhookProduct, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../webhooks/catalogue";
import type { EventTypeInfo } from "../webhooks/types";

const message = (over: Record<string, unknown> = {}) => ({
  id: "0192f400-1a2b-7c3d-8e4f-5a6b7c8d9e0f",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  domain_id: "0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f",
  from_address: "hello@mail.acme.example",
  to_address: "ada@example.com",
  subject: "Welcome to Acme",
  template_name: "welcome",
  status: "queued",
  bounce_code: null,
  bounce_detail: null,
  created_at: T0,
  sent_at: null,
  delivered_at: null,
  deferred_at: null,
  deferral_count: 0,
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
  ...over,
});

const EVENTS: EventTypeInfo[] = [
  { type: "message.queued", description: "An outbound message was accepted and queued.", example: message() },
  { type: "message.sent", description: "An outbound message left the relay (not proof of delivery).", example: message({ status: "sent", sent_at: T1 }) },
  {
    type: "message.delivered",
    description: "Recipient-side evidence shows the message was delivered.",
    example: message({ status: "delivered", sent_at: T0, delivered_at: T1 }),
  },
  {
    type: "message.deferred",
    description: "Delivery was temporarily deferred; it will be retried.",
    example: message({ status: "deferred", deferred_at: T1, deferral_count: 1, bounce_code: "4.7.1", bounce_detail: "451 4.7.1 Greylisted, try again later" }),
  },
  {
    type: "message.bounced",
    description: "The message bounced permanently; the address is suppressed.",
    example: { ...message({ status: "bounced", sent_at: T0, bounce_code: "5.1.1", bounce_detail: "550 5.1.1 User unknown" }), bounce_type: "hard" },
  },
  {
    type: "message.complained",
    description: "The recipient reported the message as spam (feedback loop); the address is suppressed.",
    example: { ...message({ status: "complained", sent_at: T0 }), feedback_type: "abuse", complained_at: T1 },
  },
  {
    type: "message.failed",
    description: "The message could not be sent (e.g. retries exhausted or rejected before sending).",
    example: { ...message({ status: "failed" }), error: "retries exhausted: connection timed out" },
  },
  {
    type: "message.received",
    description: "An inbound message arrived in a mailbox.",
    example: {
      id: "0192f410-2b3c-7d4e-8f5a-6b7c8d9e0f1a",
      mailbox_id: "0192f3fe-9a8b-7c6d-8e5f-4a3b2c1d0e9f",
      seq_id: "118",
      envelope_to: "support@mail.acme.example",
      from_address: "ada@example.com",
      to_addresses: ["support@mail.acme.example"],
      cc_addresses: [],
      subject: "Question about my invoice",
      rfc822_message_id: "<CAF1x9@mail.example.com>",
      size_bytes: 5821,
      spam_verdict: "ham",
      spf_result: "pass",
      dkim_result: "pass",
      dmarc_result: "pass",
      quarantined: false,
      received_at: T1,
    },
  },
  { type: "domain.verified", description: "A sending/receiving domain passed its DNS checks and is active.", example: domain() },
  {
    type: "domain.failed",
    description: "A domain failed its DNS checks.",
    example: { ...domain({ status: "failed", verified_at: null }), failed_checks: [{ purpose: "dkim", type: "TXT", host: "bk1._domainkey.mail.acme.example", reason: "record not found" }] },
  },
];

export const MAIL_WEBHOOKS = defineWebhookProduct({
  product: "mail",
  label: "Mail",
  legacyHeader: "x-mail-signature",
  events: EVENTS,
});
