/**
 * The workspace brand: validation of PUT /brand, platform defaults (resolved) and the
 * brand footer partial {{> bp.footer}}.
 *
 * Decisions the spec leaves open:
 * - colours are #RRGGBB (either case, stored as given); CSS lengths are a number with px, em,
 *   rem or % (0 alone allowed), at most 4 digits before the point; URLs are https only.
 * - brand_name up to 200 characters (default: the workspace's display name), font_stack up to
 *   300 characters without ; { } < > or quotes other than ' and ", footer_address up to 500,
 *   footer_html up to 10,000 characters.
 * - footer_html: inline styles only. Anything sanitize-html would strip under our allow-list
 *   is refused with one detail per problem (script, <style>, <link>, event handlers, other
 *   tags or attributes, javascript:/data: URLs, url()/expression()/@import in style
 *   attributes, HTML comments); the accepted value is stored as sanitize-html outputs it.
 * - social_links: object of recognised key -> https URL; extras: object of up to 50 keys
 *   ([A-Za-z0-9_]{1,64}) whose values are strings (up to 2,000 characters), numbers or booleans.
 * - Unknown top-level fields are refused (400), like unknown social_links keys.
 */
import { defaultOf, lazy } from "../../../core/lazy";
import { badRequest, type ErrorDetail } from "../../../core/errors";

// Loaded by the first footer checked, not at start-up (core/lazy.ts).
const sanitizeHtml = lazy(() => defaultOf(require("sanitize-html") as typeof import("sanitize-html")));

export const SOCIAL_KEYS = ["twitter", "x", "linkedin", "github", "instagram", "facebook", "youtube", "tiktok", "mastodon", "bluesky", "web"] as const;
export type SocialKey = (typeof SOCIAL_KEYS)[number];

export const COLOR_FIELDS = ["primary_color", "secondary_color", "text_color", "muted_text_color", "background_color", "card_background_color"] as const;
export const LENGTH_FIELDS = ["button_radius", "container_max_width"] as const;
export const BRAND_FIELDS = [
  "logo_url",
  "brand_name",
  ...COLOR_FIELDS,
  "font_stack",
  ...LENGTH_FIELDS,
  "footer_html",
  "footer_address",
  "social_links",
  "extras",
] as const;
export type BrandField = (typeof BRAND_FIELDS)[number];

export interface BrandTokens {
  logo_url: string | null;
  brand_name: string | null;
  primary_color: string;
  secondary_color: string;
  text_color: string;
  muted_text_color: string;
  background_color: string;
  card_background_color: string;
  font_stack: string;
  button_radius: string;
  container_max_width: string;
  footer_html: string | null;
  footer_address: string | null;
  social_links: Partial<Record<SocialKey, string>>;
  extras: Record<string, string | number | boolean>;
}

export type BrandRaw = { [K in BrandField]: BrandTokens[K] | null };

export const BRAND_DEFAULTS: Omit<BrandTokens, "brand_name"> = {
  logo_url: null,
  primary_color: "#2563EB",
  secondary_color: "#64748B",
  text_color: "#111827",
  muted_text_color: "#6B7280",
  background_color: "#F3F4F6",
  card_background_color: "#FFFFFF",
  font_stack: "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif",
  button_radius: "6px",
  container_max_width: "600px",
  footer_html: null,
  footer_address: null,
  social_links: {},
  extras: {},
};

export const emptyRaw = (): BrandRaw => Object.fromEntries(BRAND_FIELDS.map((f) => [f, null])) as BrandRaw;

export function resolveBrand(raw: BrandRaw, workspaceName: string | null): BrandTokens {
  const out: Record<string, unknown> = { ...BRAND_DEFAULTS, brand_name: workspaceName };
  for (const f of BRAND_FIELDS) if (raw[f] !== null && raw[f] !== undefined) out[f] = raw[f];
  return out as unknown as BrandTokens;
}

export function parseRaw(json: string | null | undefined): BrandRaw {
  const raw = emptyRaw();
  if (!json) return raw;
  const v = JSON.parse(json) as Record<string, unknown>;
  for (const f of BRAND_FIELDS) if (v[f] !== undefined) (raw as Record<string, unknown>)[f] = v[f];
  return raw;
}

const COLOR_RE = /^#[0-9A-Fa-f]{6}$/;
const LENGTH_RE = /^(0|\d{1,4}(\.\d{1,3})?(px|em|rem|%))$/;
const EXTRA_KEY_RE = /^[A-Za-z0-9_]{1,64}$/;
const MAX_EXTRAS = 50;

export function isHttpsUrl(v: string): boolean {
  if (v.length > 2048 || /\s/.test(v)) return false;
  try {
    const u = new URL(v);
    return u.protocol === "https:" && !!u.hostname && !u.username && !u.password;
  } catch {
    return false;
  }
}

/** Validates a PUT /brand body; every problem is one detail. Returns the raw object to store. */
export function validateBrand(body: unknown): BrandRaw {
  const details: ErrorDetail[] = [];
  const raw = emptyRaw();
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw badRequest("The brand must be an object", [{ field: "body", reason: "must be an object" }]);
  const input = body as Record<string, unknown>;
  for (const k of Object.keys(input)) {
    if (!(BRAND_FIELDS as readonly string[]).includes(k)) details.push({ field: k, reason: `unknown field; valid fields: ${BRAND_FIELDS.join(", ")}` });
  }
  const str = (f: string, max: number): string | null => {
    const v = input[f];
    if (v === undefined || v === null) return null;
    if (typeof v !== "string") {
      details.push({ field: f, reason: "must be a string or null" });
      return null;
    }
    if (v.length > max) {
      details.push({ field: f, reason: `at most ${max} characters` });
      return null;
    }
    return v;
  };
  for (const f of COLOR_FIELDS) {
    const v = str(f, 7);
    if (v === null) continue;
    if (!COLOR_RE.test(v)) details.push({ field: f, reason: "must be a colour #RRGGBB" });
    else raw[f] = v;
  }
  for (const f of LENGTH_FIELDS) {
    const v = str(f, 16);
    if (v === null) continue;
    if (!LENGTH_RE.test(v)) details.push({ field: f, reason: "must be a CSS length: a number with px, em, rem or %, or 0" });
    else raw[f] = v;
  }
  const logo = str("logo_url", 2048);
  if (logo !== null) {
    if (!isHttpsUrl(logo)) details.push({ field: "logo_url", reason: "must be an https URL" });
    else raw.logo_url = logo;
  }
  const name = str("brand_name", 200);
  if (name !== null) raw.brand_name = name;
  const font = str("font_stack", 300);
  if (font !== null) {
    if (/[;{}<>\\]/.test(font) || font.trim() === "") details.push({ field: "font_stack", reason: "a CSS font-family list: no ; { } < > or backslash" });
    else raw.font_stack = font;
  }
  const address = str("footer_address", 500);
  if (address !== null) raw.footer_address = address;
  const footer = str("footer_html", 10_000);
  if (footer !== null) {
    const r = checkFooterHtml(footer);
    if (r.problems.length) details.push(...r.problems.map((reason) => ({ field: "footer_html", reason })));
    else raw.footer_html = r.html;
  }
  const social = input.social_links;
  if (social !== undefined && social !== null) {
    if (typeof social !== "object" || Array.isArray(social)) details.push({ field: "social_links", reason: "must be an object" });
    else {
      const links: Partial<Record<SocialKey, string>> = {};
      for (const [k, v] of Object.entries(social as Record<string, unknown>)) {
        if (!(SOCIAL_KEYS as readonly string[]).includes(k)) details.push({ field: `social_links.${k}`, reason: `unknown key; valid keys: ${SOCIAL_KEYS.join(", ")}` });
        else if (typeof v !== "string" || !isHttpsUrl(v)) details.push({ field: `social_links.${k}`, reason: "must be an https URL" });
        else links[k as SocialKey] = v;
      }
      raw.social_links = links;
    }
  }
  const extras = input.extras;
  if (extras !== undefined && extras !== null) {
    if (typeof extras !== "object" || Array.isArray(extras)) details.push({ field: "extras", reason: "must be an object" });
    else {
      const entries = Object.entries(extras as Record<string, unknown>);
      if (entries.length > MAX_EXTRAS) details.push({ field: "extras", reason: `at most ${MAX_EXTRAS} keys` });
      const out: Record<string, string | number | boolean> = {};
      for (const [k, v] of entries) {
        if (!EXTRA_KEY_RE.test(k)) details.push({ field: `extras.${k}`, reason: "keys are 1-64 letters, digits or underscores" });
        else if (typeof v === "string" ? v.length > 2000 : typeof v !== "number" && typeof v !== "boolean") {
          details.push({ field: `extras.${k}`, reason: "a string (up to 2000 characters), number or boolean" });
        } else out[k] = v as string | number | boolean;
      }
      raw.extras = out;
    }
  }
  if (details.length) throw badRequest("Invalid brand", details);
  return raw;
}

// ------------------------------------------------------------------ footer_html

const FOOTER_TAGS = ["a", "p", "br", "span", "div", "strong", "b", "em", "i", "u", "small", "img", "table", "thead", "tbody", "tr", "td", "th", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "center", "sup", "sub"];
const FOOTER_ATTRS: Record<string, string[]> = {
  "*": ["style", "align", "class", "dir", "title", "width", "height", "valign", "bgcolor", "color"],
  a: ["href", "target", "rel", "name"],
  img: ["src", "alt", "border"],
  table: ["cellpadding", "cellspacing", "border", "role"],
  td: ["colspan", "rowspan"],
  th: ["colspan", "rowspan"],
};
const FOOTER_SCHEMES = ["https", "http", "mailto", "tel"];
const BAD_STYLE_RE = /url\s*\(|expression\s*\(|@import|behavior\s*:|-moz-binding|javascript:/i;

/** What sanitize-html would strip from footer_html, one reason per problem; html is the sanitised value. */
export function checkFooterHtml(input: string): { problems: string[]; html: string } {
  const problems = new Set<string>();
  if (/<!--/.test(input)) problems.add("HTML comments are not allowed");
  const html = sanitizeHtml()(input, {
    allowedTags: FOOTER_TAGS,
    allowedAttributes: FOOTER_ATTRS,
    allowedSchemes: FOOTER_SCHEMES,
    allowProtocolRelative: false,
    transformTags: {
      "*": (tagName: string, attribs: Record<string, string>) => {
        const tag = tagName.toLowerCase();
        if (tag === "script") problems.add("<script> is not allowed");
        else if (tag === "style") problems.add("<style> is not allowed: use inline style attributes");
        else if (tag === "link") problems.add("<link> (external CSS) is not allowed: use inline style attributes");
        else if (!FOOTER_TAGS.includes(tag)) problems.add(`<${tag}> is not allowed; allowed tags: ${FOOTER_TAGS.join(", ")}`);
        for (const [name, value] of Object.entries(attribs)) {
          const a = name.toLowerCase();
          if (a.startsWith("on")) problems.add(`event handler attribute ${a} on <${tag}> is not allowed`);
          else if (![...(FOOTER_ATTRS["*"] ?? []), ...(FOOTER_ATTRS[tag] ?? [])].includes(a)) problems.add(`attribute ${a} on <${tag}> is not allowed`);
          else if (a === "style" && BAD_STYLE_RE.test(value)) problems.add(`style on <${tag}> loads external or scripted CSS (url(), expression(), @import)`);
          else if (a === "href" || a === "src") {
            const v = value.replace(/[\u0000-\u0020]/g, "").toLowerCase();
            const scheme = /^([a-z][a-z0-9+.-]*):/.exec(v)?.[1];
            if (v.startsWith("//")) problems.add(`${a} on <${tag}> must not be protocol-relative`);
            else if (scheme && !FOOTER_SCHEMES.includes(scheme)) problems.add(`${a} on <${tag}> uses the ${scheme}: scheme; allowed: ${FOOTER_SCHEMES.join(", ")}`);
          }
        }
        return { tagName, attribs };
      },
    },
  });
  return { problems: [...problems], html };
}

// ------------------------------------------------------------------ bp.footer

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const SOCIAL_LABELS: Record<SocialKey, string> = {
  twitter: "Twitter",
  x: "X",
  linkedin: "LinkedIn",
  github: "GitHub",
  instagram: "Instagram",
  facebook: "Facebook",
  youtube: "YouTube",
  tiktok: "TikTok",
  mastodon: "Mastodon",
  bluesky: "Bluesky",
  web: "Website",
};

/** The HTML of {{> bp.footer}}: footer_html, then the address, then the social links (inline styles). */
export function footerHtml(b: BrandTokens): string {
  const parts: string[] = [];
  const style = `font-family:${esc(b.font_stack)};font-size:12px;line-height:18px;color:${b.muted_text_color};text-align:center`;
  if (b.footer_html) parts.push(`<div>${b.footer_html}</div>`);
  if (b.footer_address) parts.push(`<p style="margin:8px 0">${esc(b.footer_address)}</p>`);
  const links = SOCIAL_KEYS.filter((k) => b.social_links[k]).map(
    (k) => `<a href="${esc(b.social_links[k]!)}" style="color:${b.muted_text_color};text-decoration:underline">${SOCIAL_LABELS[k]}</a>`,
  );
  if (links.length) parts.push(`<p style="margin:8px 0">${links.join(" &middot; ")}</p>`);
  if (!parts.length && b.brand_name) parts.push(`<p style="margin:8px 0">${esc(b.brand_name)}</p>`);
  return `<div class="bp-footer" style="${style}">${parts.join("")}</div>`;
}
