/**
 * What the inbound path keeps of a received message once parsed and authenticated: the
 * fields its rows store, the spam verdict and, for a VERP address, the report it carries.
 * Worked out where the message was parsed (a check worker, checks.ts), so that only these
 * few fields cross back to the event loop instead of the whole parse (text, every header,
 * attachment bytes).
 */
import { parseMail, type AttachmentInfo, type ParsedMail } from "../parse";
import { authenticateMessage, type DnsLookup } from "./auth";
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

/** What authenticateMessage needs besides the message and the resolver. */
export interface AuthInput {
  ip: string;
  helo: string;
  sender: string;
  mta: string;
}

/** What a check asks: SPF, DKIM and DMARC (null: not checked), the receiving time, the report read or not. */
export interface CheckAsk {
  auth: AuthInput | null;
  nowMs: number;
  report: boolean;
}

export const NOT_AUTHENTICATED: AuthResults = { spf: "none", dkim: "none", dmarc: "none", dmarcPolicy: null };

/** Parses raw, checks SPF, DKIM and DMARC when asked (their DNS round trips overlap the parse), and examines it. */
export async function checkMessage(raw: Uint8Array, ask: CheckAsk, resolver: DnsLookup): Promise<Examined> {
  const checks = ask.auth ? authenticateMessage(raw, { ...ask.auth, resolver }) : null;
  const [parsed, auth] = await Promise.all([parseMail(raw), checks]);
  return examine(parsed, auth, ask.nowMs, ask.report);
}

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
