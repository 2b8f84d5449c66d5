/**
 * /templates/lint: deliverability and safety checks of a draft. Each rule fires at most once
 * (its message counts the occurrences) and takes its weight off a score of 100 (floor 0).
 * Findings are sorted errors first, then warnings, then info. The rules and weights are
 * listed in docs/mail.md ("Reference" > "Lint rules").
 */
import { deriveText } from "./render";

export type Severity = "error" | "warning" | "info";
export interface Finding {
  id: string;
  severity: Severity;
  message: string;
  suggestion: string;
}

export interface LintRule {
  id: string;
  severity: Severity;
  weight: number;
}

/** Every rule: id, severity and weight (points off 100). */
export const LINT_RULES: Record<string, LintRule> = Object.fromEntries(
  (
    [
      ["script_tag", "error", 25],
      ["javascript_url", "error", 25],
      ["form_tag", "error", 15],
      ["iframe_tag", "error", 15],
      ["subject_empty", "error", 20],
      ["image_only", "error", 20],
      ["link_text_mismatch", "error", 15],
      ["html_too_large", "error", 15],
      ["empty_text_part", "error", 15],
      ["missing_unsubscribe", "warning", 10],
      ["url_shortener", "warning", 10],
      ["subject_all_caps", "warning", 10],
      ["subject_spammy_punctuation", "warning", 10],
      ["unbalanced_tags", "warning", 10],
      ["img_missing_alt", "warning", 5],
      ["insecure_link", "warning", 5],
      ["subject_too_long", "warning", 5],
      ["missing_text_part", "info", 2],
    ] as const
  ).map(([id, severity, weight]) => [id, { id, severity, weight }]),
);

/** Gmail clips messages whose HTML is over 102 KB. */
export const GMAIL_CLIP_BYTES = 102 * 1024;
export const SUBJECT_MAX = 70;
export const SHORTENERS = [
  "bit.ly", "tinyurl.com", "goo.gl", "t.co", "ow.ly", "is.gd", "buff.ly", "rebrand.ly", "cutt.ly", "shorturl.at", "tiny.cc", "rb.gy", "t.ly", "bl.ink", "s.id", "v.gd", "lnkd.in", "shorte.st", "adf.ly",
];
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"]);
const BULK_WORDS = /\b(newsletter|promotion|promo|sale|discount|offer|deal|% off|limited time|shop now|buy now|subscribe|weekly|monthly digest|digest)\b/i;

const decode = (s: string) =>
  s
    .replace(/&#x([0-9a-f]+);?/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);?/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&colon;/gi, ":")
    .replace(/&amp;/gi, "&")
    .replace(/&quot;/gi, '"')
    .replace(/&lt;/gi, "<")
    .replace(/&gt;/gi, ">")
    .replace(/&nbsp;/gi, " ");

interface Tag {
  name: string;
  closing: boolean;
  selfClosing: boolean;
  attrs: Record<string, string>;
  index: number;
  end: number;
}

function tags(html: string): Tag[] {
  const out: Tag[] = [];
  const clean = html.replace(/<!--[\s\S]*?-->/g, (m) => " ".repeat(m.length));
  const re = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>\/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*(\/?)>/g;
  for (let m = re.exec(clean); m; m = re.exec(clean)) {
    const attrs: Record<string, string> = {};
    const are = /([^\s"'>\/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
    for (let a = are.exec(m[3] ?? ""); a; a = are.exec(m[3] ?? "")) attrs[a[1]!.toLowerCase()] = decode(a[2] ?? a[3] ?? a[4] ?? "");
    out.push({ name: m[2]!.toLowerCase(), closing: m[1] === "/", selfClosing: m[4] === "/", attrs, index: m.index, end: m.index + m[0].length });
  }
  return out;
}

function hostOf(url: string): string | null {
  try {
    const u = new URL(url.trim());
    return u.hostname.toLowerCase().replace(/^www\./, "");
  } catch {
    return null;
  }
}

/** Text of an anchor that reads as a web address (example.com, https://example.com/x). */
function shownHost(text: string): string | null {
  const t = text.trim();
  const m = /^(?:https?:\/\/)?((?:[a-z0-9-]+\.)+[a-z]{2,})(?:[\/:?#]\S*)?$/i.exec(t);
  return m ? m[1]!.toLowerCase().replace(/^www\./, "") : null;
}

export function lint(input: { subject: string | null; html: string; text: string | null }): { score: number; findings: Finding[] } {
  const found = new Map<string, Finding>();
  const add = (id: string, message: string, suggestion: string) => {
    if (!found.has(id)) found.set(id, { id, severity: LINT_RULES[id]!.severity, message, suggestion });
  };
  const html = input.html;
  const all = tags(html);
  const plain = deriveText(html);

  // ---- subject
  const subject = (input.subject ?? "").trim();
  if (subject === "") add("subject_empty", "The subject is empty.", "Write a short subject that says what the message is about.");
  else {
    if (subject.length > SUBJECT_MAX) add("subject_too_long", `The subject is ${subject.length} characters; most clients cut it after about ${SUBJECT_MAX}.`, `Keep the subject under ${SUBJECT_MAX} characters.`);
    const letters = subject.replace(/[^\p{L}]/gu, "");
    if (letters.length >= 4 && letters === letters.toUpperCase() && letters !== letters.toLowerCase()) add("subject_all_caps", "The subject is in capitals.", "Use sentence case: capitals read as shouting and spam filters notice.");
    if (/[!?$]{2,}/.test(subject) || (subject.match(/!/g)?.length ?? 0) > 1) add("subject_spammy_punctuation", "The subject repeats punctuation (!!, ??, $$).", "Use at most one exclamation mark and no repeated ? or $.");
  }

  // ---- dangerous markup
  const count = (name: string) => all.filter((t) => !t.closing && t.name === name).length;
  if (count("script")) add("script_tag", `${count("script")} <script> element(s): mail clients strip them and filters penalise them.`, "Remove scripts; mail cannot run JavaScript.");
  if (count("form")) add("form_tag", `${count("form")} <form> element(s): most clients disable forms and filters flag them as phishing.`, "Link to a page on your site instead of embedding a form.");
  const frames = count("iframe") + count("frame") + count("object") + count("embed");
  if (frames) add("iframe_tag", `${frames} <iframe>/<object>/<embed> element(s): not rendered by mail clients and a spam signal.`, "Use a linked image instead of embedded content.");
  const jsUrls = all.filter((t) => !t.closing && ["href", "src", "action", "background"].some((a) => /^(javascript|vbscript):|^data:text\/html/i.test((t.attrs[a] ?? "").replace(/[\u0000-\u0020]/g, ""))));
  if (jsUrls.length) add("javascript_url", `${jsUrls.length} link(s) or source(s) use a javascript:, vbscript: or data:text/html URL.`, "Use https links only.");

  // ---- images
  const imgs = all.filter((t) => !t.closing && t.name === "img");
  const noAlt = imgs.filter((t) => !("alt" in t.attrs));
  if (noAlt.length) add("img_missing_alt", `${noAlt.length} image(s) without an alt attribute.`, 'Describe each image in alt (alt="" for decorative ones): many clients block images by default.');
  const words = plain.replace(/\[[^\]]*\]/g, " ").replace(/https?:\/\/\S+/g, " ").trim();
  if (imgs.length && words.replace(/\s+/g, "").length < 50) add("image_only", "The message is (almost) only images: image-only mail is a classic spam signal and unreadable with images off.", "Put the message in HTML text, with images as support.");

  // ---- links
  const anchors: { href: string; text: string }[] = [];
  for (let i = 0; i < all.length; i++) {
    const t = all[i]!;
    if (t.closing || t.name !== "a" || t.attrs.href === undefined) continue;
    const close = all.slice(i + 1).find((x) => x.closing && x.name === "a");
    const inner = close ? html.slice(t.end, close.index).replace(/<[^>]*>/g, "") : "";
    anchors.push({ href: t.attrs.href.trim(), text: decode(inner) });
  }
  const urls = [...anchors.map((a) => a.href), ...imgs.map((t) => t.attrs.src ?? "")];
  const insecure = urls.filter((u) => /^http:\/\//i.test(u));
  if (insecure.length) add("insecure_link", `${insecure.length} link(s) or image(s) use http://.`, "Use https:// for every link and image.");
  const mismatched = anchors.filter((a) => {
    const shown = shownHost(a.text);
    const real = hostOf(a.href);
    return shown && real && shown !== real && !real.endsWith(`.${shown}`);
  });
  if (mismatched.length) add("link_text_mismatch", `${mismatched.length} link(s) show one domain and point to another (e.g. "${mismatched[0]!.text.trim()}" -> ${hostOf(mismatched[0]!.href)}).`, "Make the visible address match the link, or use descriptive text instead of an address.");
  const short = urls.filter((u) => {
    const h = hostOf(u);
    return h !== null && SHORTENERS.includes(h);
  });
  if (short.length) add("url_shortener", `${short.length} link(s) use a URL shortener (${hostOf(short[0]!)}): shorteners are widely blocklisted.`, "Link to the full URL on your own domain.");
  const bulky = BULK_WORDS.test(`${subject} ${plain}`) || anchors.length >= 8;
  const hasUnsub = /unsubscribe|opt[ -]?out|manage (your )?(preferences|subscription)/i.test(`${plain} ${anchors.map((a) => a.href).join(" ")}`);
  if (bulky && !hasUnsub) add("missing_unsubscribe", "This looks like bulk mail (promotional words or many links) but has no unsubscribe link.", "Add a visible unsubscribe link (and send with a List-Unsubscribe header).");

  // ---- size and structure
  const bytes = Buffer.byteLength(html, "utf8");
  if (bytes > GMAIL_CLIP_BYTES) add("html_too_large", `The HTML is ${bytes} bytes; Gmail clips messages over ${GMAIL_CLIP_BYTES} bytes (102 KB).`, "Trim markup and inline styles, or link to the full content.");
  const stack: string[] = [];
  const problems: string[] = [];
  for (const t of all) {
    if (VOID.has(t.name) || t.selfClosing) continue;
    if (!t.closing) stack.push(t.name);
    else {
      const at = stack.lastIndexOf(t.name);
      if (at === -1) problems.push(`</${t.name}> without an opening tag`);
      else {
        for (const open of stack.splice(at).slice(1)) problems.push(`<${open}> is not closed`);
      }
    }
  }
  for (const open of stack) problems.push(`<${open}> is not closed`);
  if (problems.length) add("unbalanced_tags", `Unbalanced tags: ${problems.slice(0, 5).join("; ")}${problems.length > 5 ? `; ${problems.length - 5} more` : ""}.`, "Close every element you open; clients repair broken markup differently.");

  // ---- text part
  const text = input.text === null ? plain : input.text.trim();
  if (text === "") add("empty_text_part", "The plain-text part is empty.", "Write a text version (or put text in the HTML so one can be derived).");
  else if (input.text === null) add("missing_text_part", "No plain-text part was given: one is derived from the HTML.", "Write body_text yourself for the best plain-text rendering.");

  const order: Record<Severity, number> = { error: 0, warning: 1, info: 2 };
  const findings = [...found.values()].sort((a, b) => order[a.severity] - order[b.severity] || LINT_RULES[b.id]!.weight - LINT_RULES[a.id]!.weight);
  const score = Math.max(0, 100 - findings.reduce((s, f) => s + LINT_RULES[f.id]!.weight, 0));
  return { score, findings };
}
