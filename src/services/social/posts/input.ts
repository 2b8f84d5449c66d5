/** Validation of post bodies (create and patch): kinds, text, attributes (link, poll), assets. */
import { ApiError, invalidField } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import { isObject } from "../core/common";
import type { PostKind, PostStatus, Visibility } from "./store";

export const BODY_MAX = 10_000;
export const ASSETS_MAX = 20;
export const ALT_MAX = 1_000;
export const POLL_OPTIONS_MIN = 2;
export const POLL_OPTIONS_MAX = 10;
export const POLL_QUESTION_MAX = 300;
export const POLL_OPTION_MAX = 100;
export const URL_MAX = 2_048;
export const STORY_TTL_MS = 24 * 3600_000;

export const KINDS: PostKind[] = ["text", "link", "image", "quote", "story", "poll"];
export const STATUSES: PostStatus[] = ["draft", "scheduled", "published"];
export const VISIBILITIES: Visibility[] = ["public", "followers", "close_friends"];

export function oneOf<T extends string>(v: unknown, field: string, allowed: readonly T[], def?: T): T {
  if (v === undefined && def !== undefined) return def;
  if (typeof v !== "string" || !allowed.includes(v as T)) throw invalidField(field, `one of ${allowed.join(", ")}`);
  return v as T;
}

/** Body text: trimmed, at most 10,000 characters; null when absent or blank. */
export function bodyText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw invalidField("body", "must be a string");
  const s = v.trim();
  if ([...s].length > BODY_MAX) throw invalidField("body", `at most ${BODY_MAX} characters after trim`);
  return s === "" ? null : s;
}

export interface AssetRef {
  asset_id: string;
  alt_text: string | null;
}

/** Ordered asset references, at most 20, each {asset_id (uuid), alt_text?}; no repeats. */
export function assetRefs(v: unknown): AssetRef[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidField("assets", "an array of {asset_id, alt_text}");
  if (v.length > ASSETS_MAX) throw invalidField("assets", `at most ${ASSETS_MAX} items`);
  const seen = new Set<string>();
  return v.map((a, i) => {
    if (!isObject(a) || typeof a.asset_id !== "string" || !isUuid(a.asset_id)) throw invalidField(`assets[${i}].asset_id`, "required, an asset uuid");
    const id = a.asset_id.toLowerCase();
    if (seen.has(id)) throw invalidField(`assets[${i}].asset_id`, "repeated");
    seen.add(id);
    if (a.alt_text !== undefined && a.alt_text !== null && (typeof a.alt_text !== "string" || a.alt_text.length > ALT_MAX)) throw invalidField(`assets[${i}].alt_text`, `a string of at most ${ALT_MAX} characters`);
    return { asset_id: id, alt_text: (a.alt_text as string | undefined) ?? null };
  });
}

export interface Poll {
  question: string;
  options: string[];
  closes_at: string | null;
}

function poll(v: unknown, now: string): Poll {
  if (!isObject(v)) throw invalidField("attributes.poll", "required for a poll: {question, options[2-10], closes_at?}");
  const q = typeof v.question === "string" ? v.question.trim() : "";
  if (q === "" || q.length > POLL_QUESTION_MAX) throw invalidField("attributes.poll.question", `1-${POLL_QUESTION_MAX} characters`);
  if (!Array.isArray(v.options) || v.options.length < POLL_OPTIONS_MIN || v.options.length > POLL_OPTIONS_MAX) {
    throw invalidField("attributes.poll.options", `${POLL_OPTIONS_MIN}-${POLL_OPTIONS_MAX} labels`);
  }
  const options = v.options.map((o, i) => {
    const s = typeof o === "string" ? o.trim() : "";
    if (s === "" || s.length > POLL_OPTION_MAX) throw invalidField(`attributes.poll.options[${i}]`, `1-${POLL_OPTION_MAX} characters`);
    return s;
  });
  let closes: string | null = null;
  if (v.closes_at !== undefined && v.closes_at !== null) {
    const ms = typeof v.closes_at === "string" ? Date.parse(v.closes_at) : NaN;
    if (!Number.isFinite(ms)) throw invalidField("attributes.poll.closes_at", "an ISO 8601 date-time");
    if (ms <= Date.parse(now)) throw invalidField("attributes.poll.closes_at", "must be in the future");
    closes = new Date(ms).toISOString();
  }
  return { question: q, options, closes_at: closes };
}

/**
 * The stored attributes of a post of `kind`: a free-form object (at most 16 KiB) whose
 * url (link) and poll (poll) are checked and normalised.
 */
export function attributesFor(kind: PostKind, v: unknown, now: string): Record<string, unknown> {
  if (v !== undefined && v !== null && !isObject(v)) throw invalidField("attributes", "must be an object");
  const a: Record<string, unknown> = { ...((v as Record<string, unknown> | undefined) ?? {}) };
  if (JSON.stringify(a).length > 16_384) throw invalidField("attributes", "at most 16384 bytes of JSON");
  if (kind === "link") {
    const u = a.url;
    let ok = false;
    if (typeof u === "string" && u.length <= URL_MAX) {
      try {
        ok = ["http:", "https:"].includes(new URL(u).protocol);
      } catch {}
    }
    if (!ok) throw invalidField("attributes.url", `required for a link post: an http(s) URL of at most ${URL_MAX} characters`);
  }
  if (kind === "poll") a.poll = poll(a.poll, now);
  else if (a.poll !== undefined) throw invalidField("attributes.poll", "only poll posts carry a poll");
  return a;
}

/** A kind's content rules once body, assets and attributes are known. */
export function checkContent(kind: PostKind, body: string | null, assets: AssetRef[], quoteId: string | null): void {
  if (kind === "text" && body === null) throw invalidField("body", "required for a text post: 1-10000 characters after trim");
  if (kind === "image" && assets.length === 0) throw invalidField("assets", "an image post needs 1-20 assets");
  if (kind === "story" && body === null && assets.length === 0) throw invalidField("body", "a story needs a body or assets");
  if (kind === "quote" && quoteId === null) throw invalidField("quote_post_id", "required for a quote post");
  if (kind !== "quote" && quoteId !== null) throw invalidField("quote_post_id", "only quote posts reference a post");
}

/** A scheduled time: ISO 8601, in the future. */
export function scheduledFor(v: unknown, now: string): string {
  const ms = typeof v === "string" ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw invalidField("scheduled_for", "required for a scheduled post: an ISO 8601 date-time");
  if (ms <= Date.parse(now)) throw invalidField("scheduled_for", "must be in the future");
  return new Date(ms).toISOString();
}

/** @mentions: "@" then an external id of letters, digits, _ . - (at most 256), not after a word character. */
const MENTION_RE = /(?:^|[^\p{L}\p{N}_@.])@([\p{L}\p{N}_.-]{1,256})/gu;
export function extractMentions(text: string | null): string[] {
  if (!text) return [];
  const out = new Set<string>();
  for (const m of text.matchAll(MENTION_RE)) out.add(m[1].replace(/[.-]+$/, ""));
  return [...out].filter((s) => s !== "");
}

export const inactiveActor = (status: string) =>
  new ApiError(403, status === "suspended" ? "ACTOR_SUSPENDED" : "ACTOR_DELETED", status === "suspended" ? "A suspended actor cannot write" : "A deleted actor cannot write");
