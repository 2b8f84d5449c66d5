/**
 * Just enough MIME to read a received message's body in the browser: the API serves the raw
 * .eml (GET .../messages/{id}/raw) and an attachment manifest, not a rendered body, so the
 * reader parses the raw bytes here: headers (unfolded), multipart trees, base64 and
 * quoted-printable, charsets through TextDecoder. It picks the HTML body (else the text one)
 * and the inline parts named by Content-ID (cid: images become data: URLs).
 *
 * Bytes travel as "binary strings" (one char per byte) until a text part is decoded.
 */

export interface Part {
  headers: Record<string, string>;
  type: string;
  params: Record<string, string>;
  body: string;
  parts: Part[];
}

export interface ReadableMail {
  html: string | null;
  text: string | null;
  /** Content-ID (without <>) -> data: URL, for inline images. */
  inline: Record<string, string>;
}

export function bytesToBinary(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 0x8000) out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return out;
}

function binaryToBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

/** "text/html; charset=utf-8; name*=..." -> value and lower-cased params (quotes removed). */
export function headerParams(value: string): { value: string; params: Record<string, string> } {
  const [head, ...rest] = value.split(";");
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf("=");
    if (eq < 0) continue;
    params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
  }
  return { value: (head ?? "").trim().toLowerCase(), params };
}

export function parsePart(raw: string): Part {
  const m = /\r?\n\r?\n/.exec(raw);
  const headText = m ? raw.slice(0, m.index) : raw;
  const body = m ? raw.slice(m.index + m[0].length) : "";
  const headers: Record<string, string> = {};
  for (const line of headText.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const c = line.indexOf(":");
    if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] ??= line.slice(c + 1).trim();
  }
  const ct = headerParams(headers["content-type"] ?? "text/plain");
  const part: Part = { headers, type: ct.value || "text/plain", params: ct.params, body, parts: [] };
  if (part.type.startsWith("multipart/") && ct.params.boundary) {
    const delim = "--" + ct.params.boundary;
    const chunks = body.split(delim);
    // chunks[0] is the preamble; a chunk starting with "--" is the epilogue after the close.
    for (const chunk of chunks.slice(1)) {
      if (chunk.startsWith("--")) break;
      part.parts.push(parsePart(chunk.replace(/^[ \t]*\r?\n/, "").replace(/\r?\n$/, "")));
    }
  }
  return part;
}

/** The part's decoded bytes (Content-Transfer-Encoding) as a binary string. */
export function decodeBody(p: Part): string {
  const cte = (p.headers["content-transfer-encoding"] ?? "").toLowerCase();
  if (cte === "base64") {
    try {
      return atob(p.body.replace(/[^A-Za-z0-9+/=]/g, ""));
    } catch {
      return "";
    }
  }
  if (cte === "quoted-printable") return p.body.replace(/=\r?\n/g, "").replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return p.body;
}

export function decodeText(p: Part): string {
  const bytes = binaryToBytes(decodeBody(p));
  try {
    return new TextDecoder(p.params.charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

const isAttachment = (p: Part) => /^attachment/i.test(p.headers["content-disposition"] ?? "");

/** The HTML and text bodies (first of each outside attachments) and the inline images. */
export function readMail(raw: string): ReadableMail {
  const out: ReadableMail = { html: null, text: null, inline: {} };
  const walk = (p: Part) => {
    if (p.parts.length) return p.parts.forEach(walk);
    const cid = p.headers["content-id"]?.replace(/^<|>$/g, "");
    if (cid && p.type.startsWith("image/")) out.inline[cid] = `data:${p.type};base64,${btoa(decodeBody(p))}`;
    if (isAttachment(p)) return;
    if (p.type === "text/html" && out.html === null) out.html = decodeText(p);
    else if (p.type === "text/plain" && out.text === null) out.text = decodeText(p);
  };
  walk(parsePart(raw));
  return out;
}
