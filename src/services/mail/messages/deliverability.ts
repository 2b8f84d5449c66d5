/**
 * The deliverability verdict of a workspace over a window of days (GET /deliverability),
 * computed from the messages created in the window, sandbox messages left out (they met no
 * receiver). Thresholds (docs/mail.md, "Deliverability"):
 *
 * - left_queue: messages past the queue (every status but queued and sending); queued: the others.
 * - confirmed: status delivered (recipient-side evidence). negative: bounced + complained +
 *   failed + deferred (current statuses). Rates divide by left_queue (0 when nothing left).
 * - block signals: bounce details of bounced, deferred or failed messages that look like
 *   blocklisting (BLOCK_RE), grouped after normalising IP addresses and long numbers.
 *
 * Verdict, first match wins:
 * 1. no_data: nothing left the queue in the window.
 * 2. blocked: block-signal messages are at least BLOCKED_SHARE (20%) of left_queue, or at
 *    least BLOCKED_MIN (10) of them.
 * 3. at_risk: negative_rate >= AT_RISK_NEGATIVE (5%), complaints >= AT_RISK_COMPLAINTS
 *    (0.3%) of left_queue, or any block signal.
 * 4. healthy: confirmed_rate >= HEALTHY_CONFIRMED (10%) (positive recipient-side evidence).
 * 5. unconfirmed: mail left and nothing came back either way (or too little to call it).
 */
import type { Static } from "@sinclair/typebox";
import type { Deliverability } from "./schemas";
import type { MessageStatus } from "./store";
import { MAX_BLOCK_SIGNALS } from "./limits";

export const BLOCKED_SHARE = 0.2;
export const BLOCKED_MIN = 10;
export const AT_RISK_NEGATIVE = 0.05;
export const AT_RISK_COMPLAINTS = 0.003;
export const HEALTHY_CONFIRMED = 0.1;

/** Reply texts of receivers that refuse mail for its source's reputation (RBL/DNSBL listings, policy blocks). */
export const BLOCK_RE =
  /\b(block ?list(ed)?|black ?list(ed)?|deny ?list(ed)?|blocked|banned|spamhaus|barracuda|spamcop|sorbs|uceprotect|dnsbl|rbl|listed (at|on|in|by)|poor reputation|bad reputation|sender reputation|ip reputation|reputation)\b/i;

export type Verdict = "no_data" | "unconfirmed" | "healthy" | "at_risk" | "blocked";

export type DeliverabilityView = Static<typeof Deliverability>;

/** One group per receiver message: IP addresses and long numbers (queue ids, timestamps) don't split groups. */
export const normaliseDetail = (d: string) =>
  d
    .replace(/\b\d{1,3}(\.\d{1,3}){3}\b/g, "<ip>")
    .replace(/\b[0-9a-f]*:[0-9a-f:]{6,}\b/gi, "<ip>")
    .replace(/\b\d{5,}\b/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 300);

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
const round4 = (x: number) => Math.round(x * 10000) / 10000;

export function verdictOf(windowDays: number, counts: Partial<Record<MessageStatus, number>>, details: { bounce_detail: string; n: number }[]): DeliverabilityView {
  const c = (s: MessageStatus) => counts[s] ?? 0;
  const queued = c("queued") + c("sending");
  const left = c("sent") + c("delivered") + c("deferred") + c("bounced") + c("complained") + c("failed");
  const negative = c("bounced") + c("complained") + c("failed") + c("deferred");
  const confirmed = c("delivered");
  const negative_rate = left ? round4(negative / left) : 0;
  const confirmed_rate = left ? round4(confirmed / left) : 0;

  const groups = new Map<string, number>();
  for (const d of details) {
    if (!BLOCK_RE.test(d.bounce_detail)) continue;
    const k = normaliseDetail(d.bounce_detail);
    groups.set(k, (groups.get(k) ?? 0) + Number(d.n));
  }
  const block_signals = [...groups.entries()]
    .map(([detail, count]) => ({ detail, count }))
    .sort((a, b) => b.count - a.count || (a.detail < b.detail ? -1 : 1))
    .slice(0, MAX_BLOCK_SIGNALS);
  const blockedCount = [...groups.values()].reduce((a, b) => a + b, 0);

  let verdict: Verdict;
  let summary: string;
  const days = `the last ${windowDays} day${windowDays === 1 ? "" : "s"}`;
  if (left === 0) {
    verdict = "no_data";
    summary = queued
      ? `No message has left the queue in ${days} (${queued} still queued), so there is nothing to judge yet.`
      : `No message was sent in ${days}, so there is nothing to judge yet.`;
  } else if (blockedCount >= BLOCKED_MIN || blockedCount / left >= BLOCKED_SHARE) {
    verdict = "blocked";
    summary = `Receivers refused ${blockedCount} of ${left} messages in ${days} with blocklist or reputation errors; check the block signals and delist the sending IP or domain before sending more.`;
  } else if (negative / left >= AT_RISK_NEGATIVE || c("complained") / left >= AT_RISK_COMPLAINTS || blockedCount > 0) {
    verdict = "at_risk";
    summary =
      blockedCount > 0 && negative / left < AT_RISK_NEGATIVE
        ? `Some receivers refused mail with blocklist or reputation errors (${blockedCount} of ${left} messages in ${days}); watch the block signals.`
        : `${pct(negative / left)} of the ${left} messages that left the queue in ${days} bounced, were deferred, failed or drew complaints, above the ${pct(AT_RISK_NEGATIVE)} that mailbox providers tolerate.`;
  } else if (confirmed / left >= HEALTHY_CONFIRMED) {
    verdict = "healthy";
    summary = `${pct(confirmed / left)} of the ${left} messages that left the queue in ${days} are confirmed delivered and ${pct(negative / left)} came back negative.`;
  } else {
    verdict = "unconfirmed";
    summary = `${left} message${left === 1 ? "" : "s"} left the queue in ${days} and little came back either way (${confirmed} confirmed, ${negative} negative): accepted by the receiving servers, delivery not confirmed.`;
  }
  return {
    verdict,
    window_days: windowDays,
    left_queue: left,
    queued,
    confirmed,
    negative,
    deferred: c("deferred"),
    bounced: c("bounced"),
    negative_rate,
    confirmed_rate,
    block_signals,
    summary,
  };
}
