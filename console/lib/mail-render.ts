/**
 * A received message made safe to show: the API serves the raw .eml, not a rendered body,
 * so the reader parses it here with postal-mime and cleans its HTML with DOMPurify before it
 * goes into a sandbox="" iframe (no script, opaque origin) as a second line of defence.
 *
 * The policy on top of the two libraries: no scripts, event handlers, forms, frames or
 * `javascript:` links (DOMPurify's HTML profile plus the forbidden tags below), and no remote
 * resources: `src`, `srcset`, `background` and `poster` that are not the message's own
 * `data:` or `cid:` images, CSS `url()`s that are not (in style attributes and `<style>`
 * elements, read through the browser's own CSS parser, so escapes and `image-set()` come out
 * as plain `url("...")`) and `@import` rules are removed and counted, so nothing is fetched
 * and the page's CSP has nothing to refuse. `cid:` references become `data:` URLs built from
 * the parsed inline parts.
 *
 * DOMPurify parses into an inert document (no browsing context): parsing loads and runs
 * nothing, and its `<style>` elements still get a CSSOM sheet to inspect.
 *
 * Inert is not enough for the page's CSP, though: Chromium (156 at least) reports
 * "Executing inline event handler violates ... script-src 'self'" the moment an event-handler
 * attribute (onerror, onload, onclick ...) is set on an element of any document this page's
 * script creates (DOMParser, createHTMLDocument, <template>, even Document.parseHTML of the
 * Sanitizer API), before anything could run. So the message meets no browser parser with its
 * handlers: a DOM-free first pass (sanitize-html, i.e. htmlparser2) takes them out, see
 * withoutHandlers() below, and DOMPurify gets what is left.
 */
import DOMPurify, { type UponSanitizeAttributeHookEvent } from "dompurify";
import PostalMime from "postal-mime";
import sanitizeHtml from "sanitize-html";

export interface RenderedMail {
  /** A whole HTML document for the iframe's srcdoc. */
  html: string;
  /** Remote images, backgrounds, CSS urls and imports removed. */
  blocked: number;
}

/** Attributes that make the browser fetch something. */
const FETCHING = new Set(["src", "srcset", "background", "poster", "lowsrc", "dynsrc"]);
const FORBID_TAGS = ["form", "input", "button", "select", "option", "optgroup", "textarea", "datalist", "output", "audio", "video", "source", "track", "picture", "meta", "link", "base", "iframe", "frame", "frameset", "object", "embed", "portal"];
const FORBID_ATTR = ["action", "formaction", "ping", "srcdoc", "target"];
/** Links: web, mail and phone, and in-page anchors; everything else (javascript:, relative paths) is removed. */
const ALLOWED_URI = /^(?:(?:https?|mailto|tel):|#)/i;
/** The message's own images: a data: URL of an image type. */
const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+[;,]/i;
/** A url() as the browser serialises it: always url("..."), escapes resolved. */
const CSS_URL = /url\("((?:[^"\\]|\\.)*)"\)/g;

/** Elements written without an end tag (sanitize-html's default list lacks a few). */
const VOID = ["area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr"];
/** Dropped with their content before any browser parser sees the message (see withoutHandlers). */
const DROPPED = new Set(["script", "svg", "math"]);

/**
 * The first pass, done without a DOM: sanitize-html tokenises the message with htmlparser2
 * and writes it out again (text and attribute values escaped, comments, doctype and
 * processing instructions dropped) without
 * - event-handler attributes (every `on*` name: the ones Chromium reports when an element
 *   gets them, in any document),
 * - `<script>` elements and their text,
 * - `<svg>` and `<math>` elements and their content. DOMPurify's HTML profile drops them
 *   anyway, and inside them htmlparser2's idea of the foreign-content rules is not the
 *   browser's: htmlparser2 reads `<svg><style>` text as markup (entities decoded) and
 *   sanitize-html writes any `<style>` text out unescaped, so
 *   `<svg><style>&lt;/style&gt;&lt;img onerror=...&gt;` would reach the browser as an
 *   `<img onerror>`. Without them, everything written out was read by htmlparser2 as HTML,
 *   where `<style>` text is raw text for both parsers and all other text is escaped.
 * Everything else is kept as it was, the options set so that sanitize-html applies none of
 * its own policy: which tags, attributes, URLs and styles stay is DOMPurify's decision, below.
 */
export function withoutHandlers(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: false,
    allowedAttributes: false,
    allowVulnerableTags: true, // <style> is kept for DOMPurify and the CSSOM checks
    nonBooleanAttributes: [], // empty attributes kept
    allowedSchemesAppliedToAttributes: [], // URLs are left to DOMPurify and the hooks
    allowedSchemes: ["http", "https", "mailto", "tel", "cid", "data"], // srcset candidates are always checked against this list
    parseStyleAttributes: false, // style attributes are read by the browser's CSS parser later
    selfClosing: VOID,
    transformTags: { "*": (tagName, attribs) => ({ tagName, attribs: Object.fromEntries(Object.entries(attribs).filter(([name]) => !/^on/i.test(name))) }) },
    exclusiveFilter: (frame) => DROPPED.has(frame.tag),
  });
}

/** Parses the raw message and returns its HTML (or text) body as a safe document. */
export async function renderMail(raw: ArrayBuffer): Promise<RenderedMail> {
  const mail = await PostalMime.parse(raw, { attachmentEncoding: "base64" });
  const inline = new Map<string, string>();
  for (const a of mail.attachments) {
    const cid = a.contentId?.replace(/^<|>$/g, "");
    if (cid && /^image\/[a-z0-9.+-]+$/.test(a.mimeType) && typeof a.content === "string") inline.set(cid, `data:${a.mimeType};base64,${a.content}`);
  }
  if (mail.html) return sanitizeMailHtml(mail.html, inline);
  const doc = document.implementation.createHTMLDocument("");
  const pre = doc.createElement("pre");
  pre.setAttribute("style", "white-space:pre-wrap;font:14px/1.4 system-ui,sans-serif");
  pre.textContent = mail.text ?? "";
  return { html: "<!doctype html>" + pre.outerHTML, blocked: 0 };
}

/** `cid:x` (also percent-encoded, RFC 2392) -> the inline part's data: URL, if the message has it. */
function cidUrl(url: string, inline: Map<string, string>): string | undefined {
  if (!/^cid:/i.test(url)) return undefined;
  const id = url.slice(4);
  try {
    return inline.get(id) ?? inline.get(decodeURIComponent(id));
  } catch {
    return inline.get(id);
  }
}

export function sanitizeMailHtml(html: string, inline: Map<string, string>): RenderedMail {
  // A fresh instance per message: its hooks close over this message's parts and counter.
  const purify = DOMPurify(window);
  let blocked = 0;
  const marked = new WeakSet<Element>();

  /** Removes declarations with remote url()s (counted), rewrites cid: ones to data: URLs; true when it changed something. */
  const cleanDeclarations = (style: CSSStyleDeclaration): boolean => {
    let changed = false;
    for (const prop of [...style]) {
      const value = style.getPropertyValue(prop);
      if (!/url\(/i.test(value)) continue;
      let remote = value.split(/url\(/i).length - 1 !== [...value.matchAll(CSS_URL)].length;
      const next = value.replace(CSS_URL, (m, u: string) => {
        if (/^data:/i.test(u)) return m;
        const data = cidUrl(u.replace(/\\(.)/g, "$1"), inline);
        if (data) return `url("${data}")`;
        remote = true;
        return m;
      });
      if (remote) {
        style.removeProperty(prop);
        blocked++;
        changed = true;
      } else if (next !== value) {
        style.setProperty(prop, next, style.getPropertyPriority(prop));
        changed = true;
      }
    }
    return changed;
  };

  /** A style sheet or a grouping rule's children: @import removed (counted), declarations cleaned. */
  const cleanRules = (owner: CSSStyleSheet | CSSGroupingRule | CSSKeyframesRule): boolean => {
    let changed = false;
    for (let i = owner.cssRules.length - 1; i >= 0; i--) {
      const rule = owner.cssRules[i]!;
      if (rule instanceof CSSImportRule && owner instanceof CSSStyleSheet) {
        owner.deleteRule(i);
        blocked++;
        changed = true;
        continue;
      }
      if ("style" in rule && rule.style instanceof CSSStyleDeclaration && cleanDeclarations(rule.style)) changed = true;
      if ((rule instanceof CSSGroupingRule || rule instanceof CSSKeyframesRule) && cleanRules(rule)) changed = true;
    }
    return changed;
  };

  // Fetching attributes are all taken out of DOMPurify's hands: the message's own images
  // (cid: parts as data: URLs, data:image/ as is) are put back after its checks, the rest is
  // dropped and counted.
  const images = new Map<Element, [string, string][]>();
  purify.addHook("uponSanitizeAttribute", (node: Element, ev: UponSanitizeAttributeHookEvent) => {
    if (!FETCHING.has(ev.attrName)) return;
    ev.keepAttr = false;
    const value = ev.attrValue.trim();
    const data = cidUrl(value, inline) ?? (ev.attrName !== "srcset" && DATA_IMAGE.test(value) ? value : undefined);
    if (data) images.set(node, [...(images.get(node) ?? []), [ev.attrName, data]]);
    else if (value && !/^(?:data:|cid:)/i.test(value)) {
      blocked++;
      marked.add(node);
    }
  });

  purify.addHook("afterSanitizeAttributes", (node: Element) => {
    for (const [name, data] of images.get(node) ?? []) node.setAttribute(name, data);
    if (marked.has(node)) node.setAttribute("data-blocked", "remote resource");
    if (node instanceof HTMLElement && node.hasAttribute("style")) {
      cleanDeclarations(node.style);
      if (!node.style.length) node.removeAttribute("style");
    }
    if (node instanceof HTMLAnchorElement) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
    if (node instanceof HTMLStyleElement && node.sheet) {
      if (cleanRules(node.sheet)) node.textContent = [...node.sheet.cssRules].map((r) => r.cssText).join("\n");
    }
  });

  const clean = purify.sanitize(withoutHandlers(html), {
    USE_PROFILES: { html: true },
    WHOLE_DOCUMENT: true,
    FORBID_TAGS,
    FORBID_ATTR,
    ALLOWED_URI_REGEXP: ALLOWED_URI,
  });
  return { html: "<!doctype html>" + clean, blocked };
}
