/**
 * DNS checks of domains: look up every record a domain needs and apply what was found.
 * Run by POST /verify and by the schedule (pending domains every 10 min, active ones daily).
 *
 * - pending -> active when every required record is there; pending for 72 h (from
 *   created_at) without them: failed. A failed domain is no longer checked by the schedule;
 *   POST /verify still checks it and activates it when the records are there.
 * - An active domain whose required records vanish stays active (mail keeps flowing while a
 *   customer fixes a DNS slip); the check results say what is missing and domain.updated is
 *   emitted when the set of missing records changes.
 * - A pending DKIM rotation (dkim.ts) is retired once the new record is seen.
 */
import type { Principal } from "../../../access/principal";
import { HOUR, MINUTE } from "../../../core/clock";
import { tx } from "../../../core/db";
import type { DomainsContext, DomainView } from "./context";
import { txtHas, type MailResolver } from "./dns";
import { dkimP, dkimValue, splitTxt, type CheckResult, type CheckResults, type Purpose } from "./records";
import * as store from "./store";

/** Pending longer than this without the required records: failed. */
export const PENDING_TIMEOUT_MS = 72 * HOUR;
/** Check cadence of the schedule. */
export const PENDING_EVERY_MS = 10 * MINUTE;
export const ACTIVE_EVERY_MS = 24 * HOUR;

export class DomainChecks {
  constructor(
    private readonly c: DomainsContext,
    private readonly resolver: MailResolver,
  ) {}

  /** POST /verify: checks the records now and applies the outcome; returns the domain. */
  async verify(p: Principal, workspaceId: string, id: string): Promise<DomainView> {
    const ws = await this.c.m.guard(p, workspaceId, "mail.domain.write");
    const r = await this.c.inWorkspace(this.c.m.ctx.db, ws.id, id);
    // The sandbox domain has no records to look up: it is active as it is.
    if (r.sandbox) return this.c.view(r);
    const results = await this.check(r);
    await this.apply(r.id, results, { manual: true });
    return this.c.view((await store.domainById(this.c.m.ctx.db, r.id))!);
  }

  /** Looks up every record of the domain (its instructions, plus the previous DKIM selector during a rotation). */
  async check(r: store.DomainRow): Promise<CheckResults> {
    const results: CheckResults = {};
    const txt = new Map<string, Promise<{ records: string[]; chunks: string[] } | Error>>();
    const lookupTxt = (host: string) => {
      if (!txt.has(host)) txt.set(host, this.resolver.resolveTxt(host).catch((e: Error) => e));
      return txt.get(host)!;
    };
    const tasks = this.c.instructions(r).map(async (ins) => {
      const res: CheckResult = { type: ins.type, host: ins.host, required: ins.required, found: false, expected: ins.value, observed: [] };
      try {
        if (ins.type === "MX") {
          const mx = await this.resolver.resolveMx(ins.host);
          res.observed = mx.map((m) => `${m.priority} ${m.exchange}`);
          res.found = mx.some((m) => m.exchange === ins.value.toLowerCase());
        } else {
          const a = await lookupTxt(ins.host);
          if (a instanceof Error) throw a;
          switch (ins.purpose) {
            case "ownership":
              res.observed = a.records.filter((s) => s.startsWith("bunker-verification="));
              res.found = txtHas(a, ins.value, (s) => s.trim());
              break;
            case "spf": {
              res.observed = a.records.filter((s) => /^v=spf1(\s|$)/i.test(s.trim()));
              const want = this.c.m.ctx.config.mailHostname.toLowerCase();
              res.found = res.observed.some((s) => s.toLowerCase().split(/\s+/).some((m) => m.replace(/^[+~?]/, "") === `a:${want}` || m.replace(/^[+~?]/, "") === `include:${want}`));
              break;
            }
            case "dkim":
              res.observed = a.records.filter((s) => /(^|;)\s*p\s*=/.test(s));
              res.found = txtHas(a, dkimValue(r.dkim_public_key), dkimP);
              break;
            case "dmarc":
              res.observed = a.records.filter((s) => /^v=DMARC1/i.test(s.trim()));
              res.found = res.observed.length > 0;
              break;
          }
        }
      } catch (e) {
        res.error = (e as { code?: string }).code ?? (e as Error).message;
      }
      results[ins.purpose] = res;
    });
    if (r.dkim_prev_selector && r.dkim_prev_public_key) {
      const prevHost = `${r.dkim_prev_selector}._domainkey.${r.fqdn}`;
      const expected = dkimValue(r.dkim_prev_public_key);
      tasks.push(
        (async () => {
          const res: CheckResult = { type: "TXT", host: prevHost, required: false, found: false, expected: splitTxt(expected), observed: [] };
          const a = await lookupTxt(prevHost);
          if (a instanceof Error) res.error = (a as { code?: string }).code ?? a.message;
          else {
            res.observed = a.records.filter((s) => /(^|;)\s*p\s*=/.test(s));
            res.found = txtHas(a, expected, dkimP);
          }
          results.dkim_previous = res;
        })(),
      );
    }
    await Promise.all(tasks);
    return results;
  }

  /**
   * Applies check results to the domain (in one transaction, on the row as it is now):
   * pending -> active when every required record is there, pending -> failed after 72 h,
   * failed -> active on a manual verify that finds them, an active domain's missing records
   * reported (domain.updated when the set of missing records changes), a pending rotation
   * retired once the new DKIM record is seen.
   */
  async apply(id: string, results: CheckResults, opts: { manual: boolean }): Promise<void> {
    const now = this.c.m.ctx.clock.iso();
    const nowMs = this.c.m.ctx.clock.nowMs();
    await tx(this.c.m.ctx.db, async (t) => {
      const r = await store.domainById(t, id);
      if (!r) return; // deleted meanwhile
      const prev = JSON.parse(r.dns_check_results) as CheckResults;
      const rotating = r.dkim_prev_selector !== null;
      const isFound = (purpose: Purpose) => {
        const c = results[purpose];
        if (!c) return true;
        // During a rotation the old selector still signs: either record keeps the domain working.
        if (purpose === "dkim" && rotating) return c.found || !!results.dkim_previous?.found;
        return c.found;
      };
      const missing = (Object.keys(results) as (Purpose | "dkim_previous")[])
        .filter((k) => k !== "dkim_previous" && results[k]!.required && !isFound(k as Purpose))
        .sort();
      const patch: store.DomainPatch = { dns_check_results: JSON.stringify(results), last_dns_check_at: now, dns_check_lease_until: null };
      if (rotating && results.dkim?.found) {
        patch.dkim_prev_selector = null;
        patch.dkim_prev_public_key = null;
        patch.dkim_prev_private_key = null;
      }
      const failedChecks = missing.map((k) => ({ purpose: k, type: results[k as Purpose]!.type, host: results[k as Purpose]!.host }));
      let event: { previous_status: string; failed_checks: typeof failedChecks } | null = null;
      if (r.status === "pending" || (r.status === "failed" && opts.manual)) {
        if (missing.length === 0) {
          patch.status = "active";
          patch.verified_at = now;
          patch.failed_at = null;
          event = { previous_status: r.status, failed_checks: [] };
        } else if (r.status === "pending" && nowMs - Date.parse(r.created_at) >= PENDING_TIMEOUT_MS) {
          patch.status = "failed";
          patch.failed_at = now;
          event = { previous_status: r.status, failed_checks: failedChecks };
        }
      } else if (r.status === "active") {
        const before = (Object.keys(prev) as Purpose[]).filter((k) => k !== ("dkim_previous" as string) && prev[k]?.required && !prev[k]?.found).sort();
        // Compare with what the last check reported (dkim during a rotation: by isFound on the old results).
        const prevMissing = before.filter((k) => !(k === "dkim" && prev.dkim_previous?.found));
        if (missing.join() !== prevMissing.join()) event = { previous_status: r.status, failed_checks: failedChecks };
      }
      await store.updateDomain(t, r.id, patch, now);
      if (event) {
        const updated = (await store.domainById(t, r.id))!;
        await this.c.m.emit(t, r.workspace_id, "domain.updated", this.c.eventData(updated, event));
      }
    });
  }

  /** The scheduled check: claims due domains (pending every 10 min, active daily), checks and applies. Returns how many were checked. */
  async runDueChecks(limit = 50): Promise<number> {
    const nowMs = this.c.m.ctx.clock.nowMs();
    const iso = (ms: number) => new Date(ms).toISOString();
    const claimed = await tx(this.c.m.ctx.db, (t) =>
      store.claimDue(t, {
        pendingBefore: iso(nowMs - PENDING_EVERY_MS),
        activeBefore: iso(nowMs - ACTIVE_EVERY_MS),
        now: iso(nowMs),
        leaseUntil: iso(nowMs + 5 * MINUTE),
        limit,
      }),
    );
    for (const r of claimed) {
      try {
        await this.apply(r.id, await this.check(r), { manual: false });
      } catch (e) {
        this.c.m.ctx.log.warn("mail domain DNS check failed", { domain_id: r.id, error: (e as Error).message });
      }
    }
    return claimed.length;
  }
}
