/**
 * The job waitlist.referrals (every 2 s): entry.updated events for referral counts that changed
 * (a referred entry joined, was rejected or deleted). A referrer's position depends on every
 * pending entry of its waitlist, so the job computes the positions of a batch with one query per
 * waitlist instead of one per sign-up; the event carries the referrer's entry as it is then and
 * `changes.referral_count {from, to}` of that change. Claimed, emitted and deleted in one
 * transaction: at least once, in the order of the changes.
 */
import { tx } from "../../../core/db";
import { entryView } from "./views";
import { parseWaitlistSettings } from "../settings";
import * as store from "./store";
import { waitlistById } from "../waitlists";
import type { WaitlistContext } from "../events";

export const REFERRALS_JOB = "waitlist.referrals";
const BATCH = 1000;

export async function emitReferralUpdates(d: WaitlistContext): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await tx(d.ctx.db, async (t) => {
      const rows = await store.claimReferralUpdates(t, BATCH);
      const byWaitlist = new Map<string, store.ReferralUpdateRow[]>();
      for (const r of rows) (byWaitlist.get(r.waitlist_id) ?? byWaitlist.set(r.waitlist_id, []).get(r.waitlist_id)!).push(r);
      for (const [waitlistId, updates] of byWaitlist) {
        const w = await waitlistById(t, waitlistId);
        if (!w) continue;
        const positions = await store.positionsOf(t, w.id, parseWaitlistSettings(w.settings).referral_boost, [...new Set(updates.map((u) => u.entry_id))]);
        for (const u of updates) {
          const e = await store.entryById(t, w.id, u.entry_id);
          if (!e) continue; // the referrer was deleted since
          await d.emit(t, w.workspace_id, "entry.updated", {
            ...entryView(e, positions.get(e.id) ?? null),
            changes: { referral_count: { from: Number(u.from_count), to: Number(u.to_count) } },
          });
        }
      }
      await store.deleteReferralUpdates(t, rows.map((r) => r.id));
      return rows.length;
    });
    total += n;
    if (n < BATCH) return total;
  }
}
