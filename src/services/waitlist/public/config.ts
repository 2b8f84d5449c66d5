/**
 * The public GET /waitlist/v1/waitlists/{workspace_slug}/{waitlist_slug}: the configuration a
 * landing page renders. Served from an in-process cache emptied whenever a waitlist, the
 * workspace settings or a variant changes (cache bus topic waitlist.public, every node) or
 * platform data changes (a workspace switching the service off answers 404); the
 * sign-up count (settings.show_signup_count) is at most COUNT_TTL_MS old. A cached answer
 * costs no database read; views are counted in memory and added to waitlist_views in batches
 * (job waitlist.views.flush, every 10 s, and on shutdown).
 *
 * Variant: with `?visitor=<token>` (any 1-200 characters the frontend keeps, e.g. in
 * localStorage) the variant is chosen by a stable hash of waitlist id and token over the
 * active variants' weights, so a visitor keeps seeing the same one; without it, at random by
 * weight. The sign-up then posts the variant_id it was shown.
 */
import { DAY, SECOND } from "../../../core/clock";
import { tx } from "../../../core/db";
import type { MaybePromise } from "../../../core/maybe-promise";
import { notFound } from "../../../core/errors";
import type { AppContext } from "../../../context";
import { platformGeneration } from "../../../kernel/tenancy";
import { parseWaitlistSettings, type WaitlistSettings } from "../settings";
import { publicWaitlist } from "./signup";
import { PUBLIC_TOPIC, settingsOf, type VariantRow, waitlistById, type WaitlistRow } from "../waitlists";
import { addViews, publicVariantView, variantsOf } from "../variants";
import { countEntries } from "../entries";
import { publicWaitlistBase, type PublicWaitlistView } from "./views";

export const COUNT_TTL_MS = 5 * SECOND;
export const VIEWS_JOB = "waitlist.views.flush";

interface Cached {
  /** The serialised answer per variant id ("" without one), built on first use; reset with the count. */
  json: Map<string, string>;
  waitlist: WaitlistRow;
  settings: WaitlistSettings;
  base: Omit<PublicWaitlistView, "variant" | "signup_count">;
  variants: VariantRow[];
  totalWeight: number;
  count: { n: number; at: number } | null;
}

/** FNV-1a, 32 bits: a stable, fast hash for variant buckets. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class PublicConfig {
  private cache = new Map<string, Cached>();
  private gen = -1;
  private platformGen = -1;
  private views = new Map<string, number>();

  constructor(
    private readonly ctx: AppContext,
    /** False when the workspace has switched the waitlist service off (its public routes then answer 404). */
    private readonly serviceEnabled: (workspaceId: string) => Promise<boolean>,
  ) {}

  /** The public payload plus what the route needs (allowed origins). */
  get(workspaceSlug: string, slug: string, visitor: string | null, countView = true): MaybePromise<{ body: PublicWaitlistView; json: string; settings: WaitlistSettings; waitlist: WaitlistRow }> {
    const key = `${workspaceSlug.toLowerCase()}/${slug.toLowerCase()}`;
    // Emptied by any change of what it serves, and by any platform change (a service switched off, a workspace deleted).
    const gen = this.ctx.caches.generation(PUBLIC_TOPIC);
    const platformGen = platformGeneration(this.ctx);
    if (gen !== this.gen || platformGen !== this.platformGen) {
      this.cache.clear();
      this.gen = gen;
      this.platformGen = platformGen;
    }
    const hit = this.cache.get(key);
    if (hit && (!hit.settings.show_signup_count || (hit.count && this.ctx.clock.nowMs() - hit.count.at < COUNT_TTL_MS))) return this.answer(hit, visitor, countView);
    return this.load(key, workspaceSlug, slug, gen, hit).then((c) => this.answer(c, visitor, countView));
  }

  private async load(key: string, workspaceSlug: string, slug: string, gen: number, hit: Cached | undefined): Promise<Cached> {
    let c = hit;
    if (!c) {
      const w = await publicWaitlist(this.ctx.db, workspaceSlug, slug);
      if (!(await this.serviceEnabled(w.workspace_id))) throw notFound("Waitlist");
      const s = parseWaitlistSettings(w.settings);
      const ws = await settingsOf(this.ctx.db, w.workspace_id);
      const variants = (await variantsOf(this.ctx.db, w.id)).filter((v) => v.active && v.weight > 0);
      c = {
        waitlist: w,
        settings: s,
        base: publicWaitlistBase(w, s, ws),
        variants,
        totalWeight: variants.reduce((a, v) => a + Number(v.weight), 0),
        count: null,
        json: new Map(),
      };
    }
    if (c.settings.show_signup_count) {
      c.count = { n: await countEntries(this.ctx.db, c.waitlist.id), at: this.ctx.clock.nowMs() };
      c.json = new Map();
    }
    if (this.ctx.caches.generation(PUBLIC_TOPIC) === gen && platformGeneration(this.ctx) === this.platformGen) {
      if (this.cache.size >= 10_000) this.cache.clear();
      this.cache.set(key, c);
    }
    return c;
  }

  private answer(c: Cached, visitor: string | null, countView: boolean): { body: PublicWaitlistView; json: string; settings: WaitlistSettings; waitlist: WaitlistRow } {
    const v = this.pick(c, visitor);
    if (countView) this.countView(c, v);
    const body: PublicWaitlistView = {
      ...c.base,
      signup_count: c.settings.show_signup_count ? (c.count?.n ?? 0) : null,
      variant: v ? publicVariantView(v) : null,
    };
    const vid = v?.id ?? "";
    let json = c.json.get(vid);
    if (json === undefined) c.json.set(vid, (json = JSON.stringify(body)));
    return { waitlist: c.waitlist, settings: c.settings, body, json };
  }

  private dayIndex = -1;
  private dayText = "";

  private countView(c: Cached, v: VariantRow | null): void {
    const index = Math.floor(this.ctx.clock.nowMs() / DAY);
    if (index !== this.dayIndex) {
      this.dayIndex = index;
      this.dayText = new Date(index * DAY).toISOString().slice(0, 10);
    }
    const day = this.dayText;
    const vk = `${c.waitlist.id}|${day}|${v?.id ?? ""}`;
    this.views.set(vk, (this.views.get(vk) ?? 0) + 1);
  }

  private pick(c: Cached, visitor: string | null): VariantRow | null {
    if (!c.variants.length) return null;
    if (c.variants.length === 1) return c.variants[0]!;
    const point = visitor ? fnv1a(`${c.waitlist.id}:${visitor}`) % c.totalWeight : Math.floor(Math.random() * c.totalWeight);
    let acc = 0;
    for (const v of c.variants) {
      acc += Number(v.weight);
      if (point < acc) return v;
    }
    return c.variants[c.variants.length - 1]!;
  }

  /** Adds the views counted in memory to the database. */
  async flushViews(): Promise<void> {
    if (!this.views.size) return;
    const batch = [...this.views.entries()];
    this.views = new Map();
    const rows = batch.map(([k, views]) => {
      const [waitlist_id, day, variant_id] = k.split("|") as [string, string, string];
      return { waitlist_id, day, variant_id, views };
    });
    try {
      await tx(this.ctx.db, async (t) => {
        // A waitlist deleted meanwhile has no row to count against (foreign key): skip it.
        const live = rows.filter((r) => r.waitlist_id);
        const existing = new Set<string>();
        for (const r of live) if (existing.has(r.waitlist_id) || (await waitlistById(t, r.waitlist_id))) existing.add(r.waitlist_id);
        await addViews(t, live.filter((r) => existing.has(r.waitlist_id)));
      });
    } catch (e) {
      this.ctx.log.warn("waitlist views flush failed", { error: (e as Error).message });
    }
  }
}
