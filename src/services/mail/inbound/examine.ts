/**
 * What the inbound path keeps of a received message once parsed and authenticated: the
 * fields its rows store, the spam verdict and, for a VERP address, the report it carries.
 * Worked out where the message was parsed (a check worker, checks.ts), so that only these
 * few fields cross back to the event loop instead of the whole parse (text, every header,
 * attachment bytes).
 */
import type { AttachmentInfo, ParsedMail } from "../parse";
import { parseReport, type ReportOutcome } from "./reports";
import { spamCheck, type AuthResults, type SpamResult } from "./spam";

export interface Examined {
  fromAddress: string;
  fromName: string;
  to: string[];
  cc: string[];
  subject: string;
  preview: string | null;
  messageId: string | null;
  /** The manifest without the bytes. */
  attachments: AttachmentInfo[];
  /** "none" for each check that was not asked for (test addresses, reports). */
  auth: AuthResults;
  spam: SpamResult;
  /** Read only when asked (the message reached a VERP address). */
  report: ReportOutcome | null;
}

export const NOT_AUTHENTICATED: AuthResults = { spf: "none", dkim: "none", dmarc: "none", dmarcPolicy: null };

/** nowMs: the receiving time (a Date more than a day ahead of it is a spam rule). */
export function examine(parsed: ParsedMail, auth: AuthResults | null, nowMs: number, report: boolean): Examined {
  const checks = auth ?? NOT_AUTHENTICATED;
  return {
    fromAddress: parsed.fromAddress,
    fromName: parsed.fromName,
    to: parsed.to,
    cc: parsed.cc,
    subject: parsed.subject,
    preview: parsed.preview,
    messageId: parsed.messageId,
    attachments: parsed.attachments.map(({ content: _, ...a }) => a),
    auth: checks,
    spam: spamCheck(parsed, checks, nowMs),
    report: report ? parseReport(parsed) : null,
  };
}
