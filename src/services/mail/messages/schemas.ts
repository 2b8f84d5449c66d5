/** TypeBox models of the messages part (message log, settings, timeline, deliverability, suppressions). */
import { t } from "../../../core/schema";
import { ErrorBody, Pagination } from "../../../access/schemas";
import { params } from "../schemas";
import { EMAIL_MAX, EMAIL_RE, MAX_BLOCK_SIGNALS, TIMELINE_MAX_BUCKETS, WINDOW_DEFAULT, WINDOW_MAX } from "./limits";
import { LIST_DEFAULT, LIST_MAX, RECIPIENT_MAX, SUBJECT_CONTAINS_MAX, TEMPLATE_MAX } from "./query";
import { DELIVERED_TO, MESSAGE_STATUSES, SUPPRESSION_REASONS } from "./store";

export { ErrorBody };

/** The path of /suppressions/{email}: a suppressed address (any case). */
export const SuppressionParams = params({ email: t.String({ pattern: EMAIL_RE.source, maxLength: EMAIL_MAX, description: "The address (any case)" }) });

const N = t.Nullable;
const lit = <const T extends readonly [string, ...string[]]>(xs: T, description: string) => t.UnionEnum(xs, { description });

export const MessageStatus = lit(MESSAGE_STATUSES, `${MESSAGE_STATUSES.join(" | ")}; a sandbox message that was handled is delivered (see delivered_to)`);

export const Message = t.Object({
  id: t.String({ format: "uuid" }),
  workspace_id: t.String(),
  domain_id: N(t.String({ description: "Sending domain (uuid)" })),
  from_address: t.String(),
  to_address: t.String(),
  subject: t.String(),
  template_name: N(t.String()),
  status: MessageStatus,
  smtp_transcript: N(t.String({ description: "SMTP conversation of the latest attempt (no credentials, no body)" })),
  spf_result: N(t.String()),
  dkim_result: N(t.String()),
  dmarc_result: N(t.String()),
  bounce_code: N(t.String({ description: "Enhanced status or reply code of the latest 4xx/5xx" })),
  bounce_detail: N(t.String({ description: "Reply text of the latest 4xx/5xx" })),
  created_at: t.String({ format: "date-time" }),
  sent_at: N(t.String({ format: "date-time", description: "The relay or the recipient's MX accepted the message" })),
  delivered_at: N(t.String({ format: "date-time", description: "Only with recipient-side evidence" })),
  deferred_at: N(t.String({ format: "date-time", description: "Latest deferral" })),
  deferral_count: t.Integer(),
  sandbox: t.Boolean({ description: "Sent from the workspace's sandbox domain (for trying Bunker out, not for production): never relayed out of this instance" }),
  delivered_to: N(
    lit(DELIVERED_TO, "Where a sandbox message went (status delivered, sent_at = delivered_at): mailbox (an active mailbox of this instance, through the inbound path) or outbox (caught in the dev outbox, GET /outbox). null for every other message"),
  ),
});

export const MessageList = t.Object({ data: t.Array(Message), pagination: Pagination });

export const MessageBody = t.Object({
  id: t.String({ format: "uuid" }),
  subject: t.String(),
  body_html: N(t.String({ description: "null when redact_bodies is on or no body was stored" })),
  body_text: N(t.String({ description: "null when redact_bodies is on or no body was stored" })),
  redacted: t.Boolean({ description: "true when the workspace's redact_bodies is on" }),
});

const filterQuery = {
  recipient: t.Optional(t.String({ description: `Exact recipient address (case-sensitive, whole address); at most ${RECIPIENT_MAX} characters` })),
  template: t.Optional(t.String({ description: `Template name; at most ${TEMPLATE_MAX} characters` })),
  status: t.Optional(t.String({ description: MESSAGE_STATUSES.join(" | ") })),
  subject_contains: t.Optional(t.String({ description: `Case-insensitive substring of the subject (% and _ are literal); at most ${SUBJECT_CONTAINS_MAX} characters` })),
};

export const MessageListQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: `1-${LIST_MAX}, default ${LIST_DEFAULT}` })),
  cursor: t.Optional(t.String({ description: "next_cursor of the previous page; it keeps that page's filters" })),
  ...filterQuery,
});

export const MessageExportQuery = t.Object(filterQuery);

export const ForgetQuery = t.Object({ recipient: t.Optional(t.String({ description: "Required: the address whose messages go (case-insensitive)" })) });
export const Deleted = t.Object({ deleted: t.Integer({ description: "Messages removed, with their bodies" }) });

export const Settings = t.Object({ workspace_id: t.String(), redact_bodies: t.Boolean({ description: "When on, bodies are never stored and /body answers nulls (default false)" }) });
export const SettingsPatch = t.Object({ redact_bodies: t.Boolean() });

export const TimelineQuery = t.Object({
  granularity: t.Optional(t.String({ description: "Required: day" })),
  since: t.Optional(t.String({ description: "Required, inclusive: YYYY-MM-DD (UTC) or an ISO 8601 date-time" })),
  until: t.Optional(t.String({ description: `Required, exclusive; at most ${TIMELINE_MAX_BUCKETS} daily buckets` })),
  metric: t.Optional(t.String({ description: "sent (default: sent_at) or bounced (bounced_at)" })),
});
export const Timeline = t.Object({
  granularity: t.Literal("day"),
  metric: t.Union([t.Literal("sent"), t.Literal("bounced")]),
  points: t.Array(t.Object({ date: t.String({ description: "YYYY-MM-DD (UTC)" }), count: t.Integer() })),
});

export const DeliverabilityQuery = t.Object({ window_days: t.Optional(t.QueryInteger({ description: `1-${WINDOW_MAX}, default ${WINDOW_DEFAULT}` })) });
export const Deliverability = t.Object({
  verdict: lit(["no_data", "unconfirmed", "healthy", "at_risk", "blocked"] as const, "no_data | unconfirmed | healthy | at_risk | blocked (thresholds: the Mail guide, /docs/guides/mail)"),
  window_days: t.Integer(),
  left_queue: t.Integer(),
  queued: t.Integer(),
  confirmed: t.Integer(),
  negative: t.Integer({ description: "bounced + complained + failed + deferred" }),
  deferred: t.Integer(),
  bounced: t.Integer(),
  negative_rate: t.Number({ description: "negative / left_queue" }),
  confirmed_rate: t.Number({ description: "confirmed / left_queue" }),
  block_signals: t.Array(t.Object({ detail: t.String(), count: t.Integer() }), { description: `Bounce details that look like blocklisting, grouped, most frequent first (at most ${MAX_BLOCK_SIGNALS})` }),
  summary: t.String(),
});

export const Suppression = t.Object({
  email: t.String({ description: "Lower-cased address" }),
  reason: lit(SUPPRESSION_REASONS, SUPPRESSION_REASONS.join(" | ")),
  source_message_id: N(t.String({ description: "The message whose bounce or complaint added it" })),
  created_at: t.String({ format: "date-time" }),
});
export const SuppressionList = t.Object({ data: t.Array(Suppression), pagination: Pagination });
export const SuppressionListQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: `1-${LIST_MAX}, default ${LIST_DEFAULT}` })),
  cursor: t.Optional(t.String()),
  reason: t.Optional(t.String({ description: SUPPRESSION_REASONS.join(" | ") })),
});
export const SuppressionCreate = t.Object({
  email: t.String({ description: "Address to suppress (stored lower-cased)" }),
  reason: t.Optional(t.String({ description: "manual (default) or unsubscribe" })),
});
