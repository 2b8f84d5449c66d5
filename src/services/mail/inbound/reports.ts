/**
 * Bounce and complaint reports that reach a VERP address (bounces+<message id>@<domain>):
 * - RFC 3464 DSNs (multipart/report; report-type=delivery-status): the first per-recipient
 *   block's Action and Status decide: failed with 5.x.x -> bounced; delayed -> deferred;
 *   delivered -> delivered; failed with a 4.x.x status (a transient failure the reporting
 *   MTA gave up on) is a bounce too, keeping its code.
 * - RFC 5965 ARF reports (multipart/report; report-type=feedback-report) -> complained.
 * - Non-standard bounces (no report part: Exim/qmail/Gmail-style "Undelivered Mail Returned
 *   to Sender" texts): a subject or body that says the delivery failed plus an SMTP reply
 *   in the text (a 5xx code or a 5.x.x enhanced status) -> bounced; "delayed"/"will retry"
 *   with a 4xx -> deferred.
 * Anything else is kept as "unparsed" (with its raw message) and counted, never dropped.
 */
import type { ParsedMail } from "../parse";

export interface ReportOutcome {
  kind: "dsn" | "arf" | "unparsed";
  /** failed | delayed | delivered | relayed | expanded | complaint | null */
  action: string | null;
  statusCode: string | null;
  detail: string | null;
}

/** Header-like blocks of a message/delivery-status or message/feedback-report body. */
export function fieldBlocks(text: string): Map<string, string>[] {
  const unfolded = text.replace(/\r\n/g, "\n").replace(/\n[ \t]+/g, " ");
  return unfolded
    .split(/\n\s*\n/)
    .map((block) => {
      const m = new Map<string, string>();
      for (const line of block.split("\n")) {
        const i = line.indexOf(":");
        if (i > 0) {
          const k = line.slice(0, i).trim().toLowerCase();
          if (!m.has(k)) m.set(k, line.slice(i + 1).trim());
        }
      }
      return m;
    })
    .filter((m) => m.size > 0);
}

const ENHANCED = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

function reportType(mail: ParsedMail): string | null {
  const ct = mail.headers.get("content-type") as { value?: string; params?: Record<string, string> } | undefined;
  if (!ct || String(ct.value).toLowerCase() !== "multipart/report") return null;
  return (ct.params?.["report-type"] ?? "").toLowerCase() || null;
}

const partText = (mail: ParsedMail, types: string[]) => {
  const a = mail.attachments.find((x) => types.includes(x.content_type));
  return a ? a.content.toString("utf8") : null;
};

export function parseReport(mail: ParsedMail): ReportOutcome {
  const type = reportType(mail);
  const dsn = partText(mail, ["message/delivery-status", "message/global-delivery-status"]);
  if (dsn !== null || type === "delivery-status") {
    // mailparser folds a message/delivery-status part into the text: read the fields there.
    const blocks = fieldBlocks(dsn ?? mail.text);
    const rcpt = blocks.find((b) => b.has("action"));
    if (rcpt) {
      const action = rcpt.get("action")!.toLowerCase().split(/\s/)[0]!;
      const status = ENHANCED.exec(rcpt.get("status") ?? "")?.[0] ?? null;
      const diag = rcpt.get("diagnostic-code")?.replace(/^smtp;\s*/i, "") ?? null;
      return { kind: "dsn", action, statusCode: status, detail: (diag ?? rcpt.get("status") ?? null)?.slice(0, 1000) ?? null };
    }
  }
  const arf = partText(mail, ["message/feedback-report"]);
  if (arf !== null || type === "feedback-report") {
    const f = fieldBlocks(arf ?? mail.text).find((b) => b.has("feedback-type"));
    const ft = f?.get("feedback-type")?.toLowerCase() ?? "abuse";
    return { kind: "arf", action: "complaint", statusCode: null, detail: `feedback-type ${ft}${f?.get("user-agent") ? ` from ${f.get("user-agent")}` : ""}`.slice(0, 1000) };
  }
  // Non-standard bounce texts.
  const text = `${mail.subject}\n${mail.text}`;
  const failedWords = /(undeliver|delivery (status notification \(failure\)|has failed|failed)|returned mail|failure notice|mail delivery (failed|subsystem)|could not be delivered|permanent error|address rejected)/i;
  const delayedWords = /(delay(ed)?|will (be )?retr(y|ied)|temporar(y|ily))/i;
  const enhanced = ENHANCED.exec(mail.text)?.[0] ?? null;
  const reply = /\b([45]\d\d)[ -](?:[245]\.\d{1,3}\.\d{1,3} )?[^\n]{0,200}/.exec(mail.text);
  const line = reply?.[0]?.trim().slice(0, 1000) ?? null;
  if (failedWords.test(text) && ((enhanced && enhanced.startsWith("5")) || reply?.[1]?.startsWith("5"))) {
    return { kind: "dsn", action: "failed", statusCode: enhanced ?? reply![1]!, detail: line };
  }
  if (delayedWords.test(text) && ((enhanced && enhanced.startsWith("4")) || reply?.[1]?.startsWith("4"))) {
    return { kind: "dsn", action: "delayed", statusCode: enhanced ?? reply![1]!, detail: line };
  }
  return { kind: "unparsed", action: null, statusCode: null, detail: mail.subject.slice(0, 200) || null };
}
