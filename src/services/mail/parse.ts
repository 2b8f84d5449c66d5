/**
 * Parsing of a received message with mailparser: the fields a received-message row stores
 * (addresses, subject, plain-text preview, Message-ID, attachment manifest with sha256).
 * Shared by two parts, so it sits beside them rather than in either: inbound parses what
 * arrives, mailboxes re-parse a stored message to hand out one of its attachments (inbound
 * builds on mailboxes, which must not build on inbound).
 */
import { createHash } from "node:crypto";
import { lazy } from "../../core/lazy";

// Loaded by the first message received, not at start-up (core/lazy.ts).
const mailparser = lazy(() => require("mailparser") as typeof import("mailparser"));
const htmlToText = lazy(() => require("html-to-text") as typeof import("html-to-text"));

export const PREVIEW_BYTES = 512;

/** An attachment's manifest entry: what the received-message row keeps (mailboxes read it back). */
export interface AttachmentInfo {
  position: number;
  filename: string | null;
  content_id: string | null;
  content_type: string;
  size_bytes: number;
  sha256: string;
}

/** A manifest entry with its bytes. */
export interface ParsedAttachment extends AttachmentInfo {
  content: Buffer;
}

export interface ParsedMail {
  fromAddress: string;
  fromName: string;
  /** Number of addresses in From (DMARC and the spam rules want exactly one). */
  fromCount: number;
  to: string[];
  cc: string[];
  subject: string;
  preview: string | null;
  messageId: string | null;
  date: Date | null;
  headers: Map<string, unknown>;
  /** Raw header lines by lower-cased key, as parsed (for counting duplicates). */
  headerLines: { key: string; line: string }[];
  attachments: ParsedAttachment[];
  /** The parsed text/plain (or text derived from HTML). */
  text: string;
}

/** First `max` bytes of s as UTF-8, never splitting a character. */
export function utf8Prefix(s: string, max: number): string {
  const b = Buffer.from(s, "utf8");
  if (b.length <= max) return s;
  let end = max;
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString("utf8");
}

const addrs = (v: any): { address: string; name: string }[] => {
  const list = Array.isArray(v) ? v : v ? [v] : [];
  const out: { address: string; name: string }[] = [];
  const walk = (xs: any[]) => {
    for (const x of xs) {
      if (x?.group) walk(x.group);
      else if (x?.address) out.push({ address: String(x.address), name: String(x.name ?? "") });
    }
  };
  for (const a of list) walk(a?.value ?? []);
  return out;
};

const TYPE_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
/** A bare media type (no parameters) safe for a Content-Type header; application/octet-stream otherwise. */
export const safeType = (v: unknown) => (typeof v === "string" && TYPE_RE.test(v.toLowerCase()) ? v.toLowerCase() : "application/octet-stream");

/**
 * mailparser's options: no textAsHtml (its link detection costs ~20x the rest of the parse
 * on a 10 KB text with links) and no link rewriting: only text, addresses, headers and
 * attachments are used. The inbound bench's ceiling parses with them too.
 */
export const PARSE_OPTIONS = { skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true, maxHtmlLengthToParse: 2 * 1024 * 1024 } as const;

export async function parseMail(raw: Uint8Array): Promise<ParsedMail> {
  const m = await mailparser().simpleParser(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), PARSE_OPTIONS);
  const from = addrs(m.from);
  // mailparser derives text from HTML only for some structures: do it for the rest.
  let text: string = typeof m.text === "string" ? m.text : "";
  if (text.trim() === "" && typeof m.html === "string" && m.html !== "") text = htmlToText().convert(m.html.slice(0, 256 * 1024), { wordwrap: false, selectors: [{ selector: "img", format: "skip" }, { selector: "a", options: { ignoreHref: true } }] });
  const attachments: ParsedAttachment[] = (m.attachments ?? []).map((a: any, i: number) => {
    const content: Buffer = Buffer.isBuffer(a.content) ? a.content : Buffer.from(a.content ?? "");
    return {
      position: i,
      filename: typeof a.filename === "string" && a.filename !== "" ? a.filename : null,
      content_id: typeof a.cid === "string" && a.cid !== "" ? a.cid : null,
      content_type: safeType(a.contentType),
      size_bytes: content.length,
      sha256: createHash("sha256").update(content).digest("hex"),
      content,
    };
  });
  const date = m.date instanceof Date && !Number.isNaN(m.date.getTime()) && m.headers?.has?.("date") ? m.date : null;
  return {
    fromAddress: from[0]?.address ?? "",
    fromName: from[0]?.name ?? "",
    fromCount: from.length,
    to: addrs(m.to).map((a) => a.address),
    cc: addrs(m.cc).map((a) => a.address),
    subject: typeof m.subject === "string" ? m.subject : "",
    preview: text.trim() === "" ? null : utf8Prefix(text, PREVIEW_BYTES),
    messageId: typeof m.messageId === "string" && m.messageId !== "" ? m.messageId : null,
    date,
    headers: m.headers instanceof Map ? m.headers : new Map(),
    headerLines: Array.isArray(m.headerLines) ? m.headerLines : [],
    attachments,
    text,
  };
}

/** local and domain of an address ("" parts when it has no @). */
export function splitAddress(a: string): { local: string; domain: string } {
  const at = a.lastIndexOf("@");
  return at < 0 ? { local: a, domain: "" } : { local: a.slice(0, at), domain: a.slice(at + 1).toLowerCase() };
}
