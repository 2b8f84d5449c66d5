/**
 * Public sign-up (POST /waitlist/v1/waitlists/{workspace_slug}/{waitlist_slug}/entries): every
 * rule of issue 16 in order (docs/waitlist.md, "Reference"):
 * 1. the waitlist: unknown or draft 404; paused or closed 409 WAITLIST_CLOSED; a browser Origin
 *    outside allowed_origins 403 ORIGIN_NOT_ALLOWED;
 * 2. rate limits (every attempt counts; ratelimit.ts): per client address and waitlist
 *    (WAITLIST_SIGNUPS_PER_IP_PER_MINUTE, default 20) and per waitlist
 *    (settings.signups_per_minute): 429 RATE_LIMITED with Retry-After, before any 400;
 * 3. the body: honeypot `website` must be empty (400), email syntax and length, the
 *    disposable-domain list (settings.block_disposable), lengths, custom fields (required,
 *    type, select options), variant_id an active variant of the waitlist;
 * 4. a repeated email returns that entry's public view with 200 (nothing changes);
 *    max_entries reached: 409 WAITLIST_FULL;
 * 5. referral_code of another entry of the same waitlist counts a referral; unknown codes and
 *    self-referrals are ignored. Several sign-ups from one client address within
 *    BURST_WINDOW_MS set metadata.risk instead of being refused.
 */
import { createHash } from "node:crypto";
import { MINUTE } from "../../../core/clock";
import { lazy } from "../../../core/lazy";
import { takeSignupSlots, takeSlotsIn } from "./ratelimit";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, conflict, notFound, type ErrorDetail } from "../../../core/errors";
import { randomBase62, uuid } from "../../../core/ids";
import { isUniqueViolation } from "../../../core/store/sql";
import type { WaitlistEnvSettings } from "../env-settings";
import { type CustomField, type WaitlistSettings } from "../settings";
import { type ClientInfo, countEntries, entryByCode, entryByEmail, type EntryRow, type EntryService, insertEntry, NO_INVITE, type PublicEntryView, recentFromClient } from "../entries";
import { waitlistBySlugs, type WaitlistRow } from "../waitlists";
import { variantById } from "../variants";

export const EMAIL_MAX = 254;
export const NAME_MAX = 200;
export const INTEREST_MAX = 500;
export const UTM_MAX = 200;
export const TEXT_FIELD_MAX = 1000;
export const BURST_WINDOW_MS = 10 * MINUTE;
/** Sign-ups from one client address within the window from which metadata.risk is set. */
export const BURST_THRESHOLD = 3;
/** The count in metadata.risk stops at this (the check stays O(1) for a busy address). */
export const BURST_COUNT_CAP = 10;
const EMAIL_RE = /^[^\s@<>(),;:"\\]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/;

// Some 100,000 domains: read by the first sign-up checked against them, not at start-up (core/lazy.ts).
const disposableLists = lazy(() => ({
  exact: new Set<string>(require("disposable-email-domains") as string[]),
  wildcard: new Set<string>(require("disposable-email-domains/wildcard.json") as string[]),
}));

/** True when the domain (or a parent listed as a wildcard) is on the disposable list. */
export function isDisposable(domain: string): boolean {
  const lists = disposableLists();
  if (lists.exact.has(domain)) return true;
  const parts = domain.split(".");
  for (let i = 0; i < parts.length - 1; i++) if (lists.wildcard.has(parts.slice(i).join("."))) return true;
  return false;
}


export interface SignupBody {
  email?: unknown;
  name?: unknown;
  interest?: unknown;
  referral_code?: unknown;
  custom_fields?: unknown;
  utm?: unknown;
  variant_id?: unknown;
  website?: unknown;
}

const optString = (v: unknown, field: string, max: number, details: ErrorDetail[]): string | null => {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string" || v.length > max) {
    details.push({ field, reason: `a string of at most ${max} characters` });
    return null;
  }
  return v.trim() || null;
};

function customValues(defs: CustomField[], v: unknown, details: ErrorDetail[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (v !== undefined && v !== null && (typeof v !== "object" || Array.isArray(v))) {
    details.push({ field: "custom_fields", reason: "must be an object of field name -> value" });
    return out;
  }
  const given = (v ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(given)) if (!defs.some((d) => d.name === k)) details.push({ field: `custom_fields.${k}`, reason: "not a field of this waitlist" });
  for (const d of defs) {
    const x = given[d.name];
    const field = `custom_fields.${d.name}`;
    if (x === undefined || x === null || x === "") {
      if (d.required) details.push({ field, reason: "required" });
      continue;
    }
    if (d.type === "text" && typeof x === "string" && x.length <= TEXT_FIELD_MAX) out[d.name] = x;
    else if (d.type === "number" && typeof x === "number" && Number.isFinite(x)) out[d.name] = x;
    else if (d.type === "checkbox" && typeof x === "boolean") {
      if (d.required && !x) details.push({ field, reason: "must be checked" });
      out[d.name] = x;
    } else if (d.type === "select" && typeof x === "string" && d.options!.includes(x)) out[d.name] = x;
    else details.push({ field, reason: d.type === "select" ? `one of ${d.options!.join(", ")}` : d.type === "text" ? `text of at most ${TEXT_FIELD_MAX} characters` : `must be a ${d.type === "checkbox" ? "boolean" : "number"}` });
  }
  return out;
}

/** The waitlist of a public route: unknown or draft answer 404 alike. */
export async function publicWaitlist(db: Sql, workspaceSlug: string, slug: string): Promise<WaitlistRow> {
  const r = await waitlistBySlugs(db, workspaceSlug.toLowerCase(), slug.toLowerCase());
  if (!r || r.status === "draft") throw notFound("Waitlist");
  return r;
}

export const originAllowed = (s: WaitlistSettings, origin: string | null) => origin === null || s.allowed_origins.includes("*") || s.allowed_origins.includes(origin);

/** `w` and `s`: the waitlist as the public cache holds it (config.ts; emptied on every change of a waitlist). */
export async function signup(svc: EntryService, w: WaitlistRow, s: WaitlistSettings, body: SignupBody, client: ClientInfo): Promise<{ status: 200 | 201; body: PublicEntryView }> {
  const ctx = svc.m.ctx;
  if (w.status !== "open") throw conflict(`This waitlist is ${w.status} and takes no sign-ups`, "WAITLIST_CLOSED");
  if (!originAllowed(s, client.origin)) throw new ApiError(403, "ORIGIN_NOT_ALLOWED", "This origin may not post to this waitlist (settings.allowed_origins)");

  // Every attempt counts against the rate limits, valid or not: one that writes an entry takes
  // its slots in the entry's transaction, the others in one of their own (a 429 wins over a 400).
  const instance: WaitlistEnvSettings = svc.m.settings;
  const ipKey = createHash("sha256").update(`${w.id}|${client.ip ?? "unknown"}`).digest("base64url").slice(0, 22);
  const limits = [
    { key: `ip:${ipKey}`, limit: instance.signupsPerIpPerMinute, what: "per client address" },
    { key: `wl:${w.id}`, limit: s.signups_per_minute, what: "for this waitlist" },
  ];

  const details: ErrorDetail[] = [];
  if (body.website !== undefined && body.website !== null && body.website !== "") details.push({ field: "website", reason: "must be empty" });
  const email = typeof body.email === "string" ? body.email.trim().toLowerCase() : "";
  if (!email) details.push({ field: "email", reason: "required" });
  else if (email.length > EMAIL_MAX || !EMAIL_RE.test(email)) details.push({ field: "email", reason: `a valid email address of at most ${EMAIL_MAX} characters` });
  else if (s.block_disposable && isDisposable(email.slice(email.lastIndexOf("@") + 1))) details.push({ field: "email", reason: "disposable email addresses are not accepted" });
  const name = optString(body.name, "name", NAME_MAX, details);
  const interest = optString(body.interest, "interest", INTEREST_MAX, details);
  const code = typeof body.referral_code === "string" ? body.referral_code.trim() : null;
  const custom = customValues(s.custom_fields, body.custom_fields, details);
  const utmIn = body.utm ?? {};
  if (typeof utmIn !== "object" || utmIn === null || Array.isArray(utmIn)) details.push({ field: "utm", reason: "must be an object {source, medium, campaign}" });
  const u = (typeof utmIn === "object" && utmIn !== null ? utmIn : {}) as Record<string, unknown>;
  const utm = { source: optString(u.source, "utm.source", UTM_MAX, details), medium: optString(u.medium, "utm.medium", UTM_MAX, details), campaign: optString(u.campaign, "utm.campaign", UTM_MAX, details) };
  let variantId: string | null = null;
  if (body.variant_id !== undefined && body.variant_id !== null && body.variant_id !== "") {
    const v = typeof body.variant_id === "string" ? await variantById(ctx.db, w.id, body.variant_id.toLowerCase()) : null;
    if (!v || !v.active) details.push({ field: "variant_id", reason: "not an active variant of this waitlist" });
    else variantId = v.id;
  }
  if (details.length) {
    await takeSignupSlots(ctx, limits);
    throw badRequest("Invalid sign-up", details);
  }

  const clientHash = client.ip ? createHash("sha256").update(client.ip).digest("base64url").slice(0, 22) : null;
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await tx(ctx.db, async (t): Promise<{ status: 200 | 201; body: PublicEntryView }> => {
        await takeSlotsIn(t, ctx, limits);
        // Already on the list (or joined meanwhile, e.g. earlier in the same group commit): that
        // entry, even when the list is now full; the slots taken above count this attempt.
        const dup = await entryByEmail(t, w.id, email);
        if (dup) return { status: 200, body: await svc.publicView(t, w, s, dup, client) };
        if (s.max_entries !== null && (await countEntries(t, w.id)) >= s.max_entries) throw conflict("This waitlist is full", "WAITLIST_FULL");
        const now = ctx.clock.iso();
        const referrer = code ? await entryByCode(t, w.id, code) : null;
        const metadata: Record<string, unknown> = {};
        if (clientHash) {
          const recent = await recentFromClient(t, w.id, clientHash, new Date(ctx.clock.nowMs() - BURST_WINDOW_MS).toISOString(), BURST_COUNT_CAP);
          if (recent + 1 >= BURST_THRESHOLD) metadata.risk = { burst: true, signups_from_client_10m: Math.min(recent + 1, BURST_COUNT_CAP) };
        }
        const r: EntryRow = {
          id: uuid(), waitlist_id: w.id, workspace_id: w.workspace_id, email, name, interest,
          referrer: client.referer && client.referer.length <= 2000 ? client.referer : null,
          referral_code: randomBase62(8), referral_count: 0, referred_by_entry_id: referrer?.id ?? null,
          status: "pending", invited_at: null, invited_to_app_slug: null, metadata: JSON.stringify(metadata), custom_fields: JSON.stringify(custom),
          utm_source: utm.source, utm_medium: utm.medium, utm_campaign: utm.campaign, variant_id: variantId, client_hash: clientHash,
          decided_at: null, created_at: now, updated_at: now, ...NO_INVITE,
        };
        // The newest pending entry, with no referrals: last, its position is the pending count.
        const { pending } = await insertEntry(t, r);
        if (referrer) await svc.referralChanged(t, w, referrer, +1);
        await svc.emitEntryAt(t, w, "entry.created", r, pending);
        await svc.notify(t, w, r, "welcome");
        if (s.approval_required) return { status: 201, body: svc.publicViewAt(s, r, client, pending) };
        const approved = await svc.decide(t, w, s, r, "approved");
        return { status: 201, body: svc.publicViewAt(s, approved, client, null) };
      });
      return out;
    } catch (e) {
      // Full: the rollback gave the slots back; this attempt still counts.
      if (e instanceof ApiError && e.code === "WAITLIST_FULL") await takeSignupSlots(ctx, limits);
      if (!isUniqueViolation(e)) throw e;
      // The same email at once (the loser returns the winner's entry), or a referral code collision (retry).
      const winner = await entryByEmail(ctx.db, w.id, email);
      if (winner) {
        await takeSignupSlots(ctx, limits);
        return { status: 200, body: await svc.publicView(ctx.db, w, s, winner, client) };
      }
      if (attempt >= 3) throw e;
    }
  }
}
