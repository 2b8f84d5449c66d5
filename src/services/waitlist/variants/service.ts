/**
 * Variants of a waitlist (A/B copy for the landing page) and its analytics.
 *
 * Variant: {id, waitlist_id, name, display_name, description, cta_text, weight, active,
 * created_at, updated_at}. name: 1-40 of a-z, 0-9, _ and -, unique per waitlist (409
 * VARIANT_NAME_TAKEN); weight 0-1000 (0: never chosen); at most VARIANTS_MAX per waitlist.
 * Every waitlist starts with "default". Deleting a variant keeps entries' variant_id as it was.
 *
 * Analytics (?since, ?until: YYYY-MM-DD, inclusive, UTC; default the last 30 days; at most 366):
 * per day sign-ups, approvals, rejections (by decision day), referred sign-ups and views;
 * per variant views, sign-ups and conversion_rate = sign-ups / views (null without views).
 * Sign-ups that name no variant (a form that does not post the variant_id it was shown) and
 * views counted while the waitlist had no variant belong to the default variant (the oldest,
 * the one every waitlist starts with): a one-variant page always shows it, and counting them
 * apart set one row's sign-ups against another row's views (a 0% row beside a 300% total).
 * Only a waitlist with no variant left keeps a row without one;
 * top 10 referrers (all time) and sign-ups by utm_source in the range.
 */
import type { RequestMeta } from "../../../access/http";
import type { Principal } from "../../../access/principal";
import { tx } from "../../../core/db";
import { conflict, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { isUniqueViolation } from "../../../core/store/sql";
import { audit } from "../../../kernel/tenancy";
import { addDays, dayStart, daysBetween, isCalendarDay } from "../days";
import type { WaitlistContext } from "../events";
import * as store from "./store";
import { insertVariant, PUBLIC_TOPIC, type VariantRow, type WaitlistService } from "../waitlists";
import { variantView, type VariantView } from "./views";

export const VARIANTS_MAX = 20;
export const WEIGHT_MAX = 1000;
export const RANGE_MAX_DAYS = 366;
const NAME_RE = /^[a-z0-9][a-z0-9_-]{0,39}$/;
/** The range without since: the 30 days up to until, from 0001-01-01 at the earliest. */
const DEFAULT_DAYS = 30;
const FIRST_DAY = "0001-01-01";

export interface VariantInput {
  name?: unknown;
  display_name?: unknown;
  description?: unknown;
  cta_text?: unknown;
  weight?: unknown;
  active?: unknown;
}

function fields(b: VariantInput, creating: boolean): Partial<VariantRow> {
  const out: Partial<VariantRow> = {};
  if (b.name !== undefined || creating) {
    if (typeof b.name !== "string" || !NAME_RE.test(b.name)) throw invalidField("name", "1-40 of a-z, 0-9, _ and -, starting with a letter or digit");
    out.name = b.name;
  }
  for (const [k, max] of [["display_name", 200], ["description", 2000], ["cta_text", 100]] as const) {
    const v = b[k];
    if (v === undefined) continue;
    if (v !== null && (typeof v !== "string" || v.length > max)) throw invalidField(k, `a string of at most ${max} characters, or null`);
    out[k] = v as string | null;
  }
  if (b.weight !== undefined) {
    if (typeof b.weight !== "number" || !Number.isInteger(b.weight) || b.weight < 0 || b.weight > WEIGHT_MAX) throw invalidField("weight", `integer 0-${WEIGHT_MAX}`);
    out.weight = b.weight;
  }
  if (b.active !== undefined) {
    if (typeof b.active !== "boolean") throw invalidField("active", "must be a boolean");
    out.active = b.active ? 1 : 0;
  }
  return out;
}

/**
 * The public pages' view counter (public/config.ts), flushed before statistics are read: a port
 * here because public/ builds on variants/ (it shows them), not the other way round.
 */
export interface ViewCounts {
  flushViews(): Promise<void>;
}

export class VariantService {
  constructor(
    private readonly m: WaitlistContext,
    private readonly waitlists: WaitlistService,
    private readonly publicConfig: ViewCounts,
  ) {}

  async list(p: Principal, workspaceId: string, waitlistId: string): Promise<{ data: VariantView[] }> {
    const { waitlist } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.read");
    return { data: (await store.variantsOf(this.m.ctx.db, waitlist.id)).map(variantView) };
  }

  async create(p: Principal, workspaceId: string, waitlistId: string, b: VariantInput, meta?: RequestMeta): Promise<VariantView> {
    const { ws, waitlist, input: f } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.update", () => fields(b, true));
    const now = this.m.ctx.clock.iso();
    const row: VariantRow = {
      id: uuid(), waitlist_id: waitlist.id, name: f.name!, display_name: f.display_name ?? null, description: f.description ?? null, cta_text: f.cta_text ?? null,
      weight: f.weight ?? 1, active: f.active ?? 1, created_at: now, updated_at: now,
    };
    const taken = () => conflict(`A variant named "${row.name}" exists`, "VARIANT_NAME_TAKEN");
    try {
      await tx(this.m.ctx.db, async (t) => {
        if ((await store.variantsOf(t, waitlist.id)).length >= VARIANTS_MAX) throw conflict(`At most ${VARIANTS_MAX} variants per waitlist`, "VARIANT_LIMIT_REACHED");
        if (await store.variantNameTaken(t, waitlist.id, row.name, "")) throw taken();
        await insertVariant(t, row);
        await this.m.ctx.caches.changed(t, PUBLIC_TOPIC);
        await audit(t, this.m.ctx, { actor: p, action: "waitlist.variant.create", workspaceId: ws.id, target: { type: "waitlist_variant", id: row.id }, meta, metadata: { name: row.name } });
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw taken();
      throw e;
    }
    return variantView(row);
  }

  async update(p: Principal, workspaceId: string, waitlistId: string, id: string, b: VariantInput, meta?: RequestMeta): Promise<VariantView> {
    const { ws, waitlist, input: f } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.update", () => fields(b, false));
    try {
      return await tx(this.m.ctx.db, async (t) => {
        const r = await store.variantById(t, waitlist.id, id.toLowerCase());
        if (!r) throw notFound("Variant");
        if (Object.keys(f).length === 0) return variantView(r);
        if (f.name !== undefined && (await store.variantNameTaken(t, waitlist.id, f.name, r.id))) throw conflict(`A variant named "${f.name}" exists`, "VARIANT_NAME_TAKEN");
        await store.updateVariant(t, r.id, f, this.m.ctx.clock.iso());
        await this.m.ctx.caches.changed(t, PUBLIC_TOPIC);
        await audit(t, this.m.ctx, { actor: p, action: "waitlist.variant.update", workspaceId: ws.id, target: { type: "waitlist_variant", id: r.id }, meta, metadata: { fields: Object.keys(f) } });
        return variantView((await store.variantById(t, waitlist.id, r.id))!);
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict("A variant of that name exists", "VARIANT_NAME_TAKEN");
      throw e;
    }
  }

  async remove(p: Principal, workspaceId: string, waitlistId: string, id: string, meta?: RequestMeta): Promise<void> {
    const { ws, waitlist } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.update");
    await tx(this.m.ctx.db, async (t) => {
      const r = await store.variantById(t, waitlist.id, id.toLowerCase());
      if (!r) throw notFound("Variant");
      await store.deleteVariant(t, r.id);
      await this.m.ctx.caches.changed(t, PUBLIC_TOPIC);
      await audit(t, this.m.ctx, { actor: p, action: "waitlist.variant.delete", workspaceId: ws.id, target: { type: "waitlist_variant", id: r.id }, meta, metadata: { name: r.name } });
    });
  }

  /** The analytics range (400 naming since or until); no stored record needed. */
  private range(q: { since?: string; until?: string }) {
    for (const k of ["since", "until"] as const) {
      const v = q[k];
      if (v !== undefined && !isCalendarDay(v)) throw invalidField(k, "a calendar date YYYY-MM-DD (UTC), years 0001-9999");
    }
    const until = q.until ?? new Date(this.m.ctx.clock.nowMs()).toISOString().slice(0, 10);
    const defaultSince = addDays(until, -(DEFAULT_DAYS - 1));
    const since = q.since ?? (defaultSince < FIRST_DAY ? FIRST_DAY : defaultSince);
    const days = daysBetween(since, until);
    if (days < 1) throw invalidField("until", "must not be before since");
    if (days > RANGE_MAX_DAYS) throw invalidField("since", `the range is at most ${RANGE_MAX_DAYS} days`);
    return { since, until, days };
  }

  async analytics(p: Principal, workspaceId: string, waitlistId: string, q: { since?: string; until?: string }) {
    const { waitlist: w, input } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.read", () => this.range(q));
    const { since, until, days } = input;
    await this.publicConfig.flushViews();
    const from = dayStart(since);
    // The end of until as ISO 8601's 24:00 rather than the next day's start: the day after
    // 9999-12-31 has no four-digit year, and the stored instants are compared as text.
    const to = `${until}T24:00:00.000Z`;
    const db = this.m.ctx.db;
    const [signups, decisions, views, variants, referrers, utm] = await Promise.all([
      store.signupsByDay(db, w.id, from, to),
      store.decisionsByDay(db, w.id, from, to),
      store.viewsBetween(db, w.id, since, until),
      store.variantsOf(db, w.id),
      store.topReferrers(db, w.id, 10),
      store.utmSources(db, w.id, from, to),
    ]);
    const daily = new Map<string, { date: string; signups: number; approvals: number; rejections: number; referrals: number; views: number }>();
    for (let i = 0; i < days; i++) {
      const date = addDays(since, i);
      daily.set(date, { date, signups: 0, approvals: 0, rejections: 0, referrals: 0, views: 0 });
    }
    const perVariant = new Map<string, { views: number; signups: number }>();
    const fallback = variants[0]?.id ?? "";
    const pv = (id: string | null) => {
      const key = id || fallback;
      return perVariant.get(key) ?? perVariant.set(key, { views: 0, signups: 0 }).get(key)!;
    };
    for (const r of signups) {
      const d = daily.get(r.day);
      if (d) {
        d.signups += Number(r.signups);
        d.referrals += Number(r.referred);
      }
      pv(r.variant_id).signups += Number(r.signups);
    }
    for (const r of decisions) {
      const d = daily.get(r.day);
      if (d && r.status === "approved") d.approvals += Number(r.n);
      if (d && r.status === "rejected") d.rejections += Number(r.n);
    }
    for (const r of views) {
      const d = daily.get(r.day);
      if (d) d.views += Number(r.views);
      pv(r.variant_id).views += Number(r.views);
    }
    const names = new Map(variants.map((v) => [v.id, v.name]));
    // The waitlist's variants in their order, then deleted ones and the row without one.
    const ids = [...names.keys(), ...[...perVariant.keys()].filter((id) => !names.has(id))];
    const byVariant = ids.map((id) => {
      const c = perVariant.get(id) ?? { views: 0, signups: 0 };
      return { variant_id: id === "" ? null : id, name: names.get(id) ?? null, views: c.views, signups: c.signups, conversion_rate: c.views ? Math.round((c.signups / c.views) * 10000) / 10000 : null };
    });
    const list = [...daily.values()];
    const sum = (k: "signups" | "approvals" | "rejections" | "referrals" | "views") => list.reduce((a, d) => a + d[k], 0);
    return {
      since,
      until,
      totals: { signups: sum("signups"), approvals: sum("approvals"), rejections: sum("rejections"), referrals: sum("referrals"), views: sum("views"), conversion_rate: sum("views") ? Math.round((sum("signups") / sum("views")) * 10000) / 10000 : null },
      daily: list,
      variants: byVariant,
      top_referrers: referrers.map((r) => ({ entry_id: r.id, email: r.email, name: r.name, referral_code: r.referral_code, referral_count: Number(r.referral_count) })),
      utm_sources: utm.map((r) => ({ source: r.source, signups: Number(r.n) })),
    };
  }
}
