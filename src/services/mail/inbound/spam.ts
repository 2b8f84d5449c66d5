/**
 * The spam rule set of received mail (docs/mail.md, "Reference" > "Inbound mail").
 * Each matched rule adds its points; 5 or more is spam, 3-4 suspicious, less clean.
 * A message is quarantined when its verdict is spam or DMARC fails under a quarantine or
 * reject policy.
 */
import type { ParsedMail } from "../parse";

export const SPAM_THRESHOLD = 5;
export const SUSPICIOUS_THRESHOLD = 3;

export const EXECUTABLE_EXTENSIONS = [
  "exe", "scr", "bat", "cmd", "com", "pif", "vbs", "vbe", "js", "jse", "wsf", "wsh", "msi", "msp", "jar", "ps1", "hta", "cpl", "lnk", "reg", "iso", "img", "dll",
] as const;
const EXECUTABLE_TYPES = new Set(["application/x-msdownload", "application/x-msdos-program", "application/x-dosexec", "application/x-executable", "application/vnd.microsoft.portable-executable", "application/x-ms-installer"]);

export interface AuthResults {
  spf: string;
  dkim: string;
  dmarc: string;
  /** The DMARC policy in force for the From domain (none, quarantine, reject) or null. */
  dmarcPolicy: string | null;
}

export interface SpamResult {
  score: number;
  verdict: "clean" | "suspicious" | "spam";
  rules: { rule: string; score: number }[];
  quarantined: boolean;
}

export const RULES = {
  SPF_FAIL: 3,
  SPF_SOFTFAIL: 1,
  DKIM_FAIL: 2,
  DMARC_FAIL: 3,
  DMARC_FAIL_MONITOR: 1,
  NO_AUTH: 1,
  MISSING_MESSAGE_ID: 1,
  MISSING_DATE: 1,
  MISSING_FROM: 2,
  MULTIPLE_FROM: 2,
  DATE_IN_FUTURE: 1,
  EXECUTABLE_ATTACHMENT: 5,
  DOUBLE_EXTENSION: 2,
  SUBJECT_ALL_CAPS: 1,
  FROM_NAME_SPOOFS_ADDRESS: 2,
} as const;

const ext = (name: string) => name.toLowerCase().split(".").pop() ?? "";

export function spamCheck(mail: ParsedMail, auth: AuthResults, nowMs: number): SpamResult {
  const rules: { rule: string; score: number }[] = [];
  const hit = (rule: keyof typeof RULES) => rules.push({ rule, score: RULES[rule] });
  if (auth.spf === "fail") hit("SPF_FAIL");
  else if (auth.spf === "softfail") hit("SPF_SOFTFAIL");
  if (auth.dkim === "fail") hit("DKIM_FAIL");
  // The domain's own policy says how much a DMARC failure means: p=none only monitors.
  if (auth.dmarc === "fail") hit(auth.dmarcPolicy === "quarantine" || auth.dmarcPolicy === "reject" ? "DMARC_FAIL" : "DMARC_FAIL_MONITOR");
  if (auth.spf !== "pass" && auth.dkim !== "pass") hit("NO_AUTH");
  if (!mail.messageId) hit("MISSING_MESSAGE_ID");
  if (!mail.date) hit("MISSING_DATE");
  else if (mail.date.getTime() > nowMs + 24 * 3600_000) hit("DATE_IN_FUTURE");
  const fromHeaders = mail.headerLines.filter((h) => h.key === "from").length;
  if (mail.fromCount === 0) hit("MISSING_FROM");
  else if (fromHeaders > 1 || mail.fromCount > 1) hit("MULTIPLE_FROM");
  const names = mail.attachments.map((a) => a.filename ?? "");
  if (mail.attachments.some((a) => (EXECUTABLE_EXTENSIONS as readonly string[]).includes(ext(a.filename ?? "")) || EXECUTABLE_TYPES.has(a.content_type))) hit("EXECUTABLE_ATTACHMENT");
  if (names.some((n) => /\.(pdf|docx?|xlsx?|jpe?g|png|txt|zip)\.[a-z0-9]{2,4}$/i.test(n))) hit("DOUBLE_EXTENSION");
  const letters = mail.subject.replace(/[^A-Za-z]/g, "");
  if (letters.length >= 10 && letters === letters.toUpperCase()) hit("SUBJECT_ALL_CAPS");
  // "paypal.com <x@evil.example>": a display name showing another address or domain.
  const shown = /[A-Za-z0-9._%+-]+@([A-Za-z0-9.-]+\.[A-Za-z]{2,})/.exec(mail.fromName);
  const fromDomain = mail.fromAddress.split("@").pop()?.toLowerCase() ?? "";
  if (shown && shown[1]!.toLowerCase() !== fromDomain) hit("FROM_NAME_SPOOFS_ADDRESS");
  const score = rules.reduce((s, r) => s + r.score, 0);
  const verdict = score >= SPAM_THRESHOLD ? "spam" : score >= SUSPICIOUS_THRESHOLD ? "suspicious" : "clean";
  const dmarcEnforced = auth.dmarc === "fail" && (auth.dmarcPolicy === "quarantine" || auth.dmarcPolicy === "reject");
  return { score, verdict, rules, quarantined: verdict === "spam" || dmarcEnforced };
}
