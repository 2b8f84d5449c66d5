/**
 * Mail domains (issue 13, "Domains"): a workspace's sending/receiving domains, their DKIM keys
 * and the DNS checks that move them pending -> active (or failed).
 *
 * Decisions where the issue and spec are silent (README "Mail: domains"):
 * - fqdn: IDNA to ASCII (node:url domainToASCII), lower case, one trailing dot dropped (so
 *   "a.example." and "a.example" are the same domain: 409 DOMAIN_EXISTS); at least two labels,
 *   labels of letters, digits and hyphens (1-63, no leading/trailing hyphen), at most 253
 *   characters, an all-numeric last label is refused (IP literals in any form are refused).
 * - Required records: ownership TXT for every intent; SPF and DKIM for send intents; MX for
 *   receive intents. DMARC is recommended (checked and reported, not required).
 * - Pending for 72 h (from created_at) without the required records: failed. A failed domain
 *   is no longer checked by the schedule; POST /verify still checks it and activates it when
 *   the records are there.
 * - An active domain whose required records vanish stays active (mail keeps flowing while a
 *   customer fixes a DNS slip); the check results say what is missing and domain.updated is
 *   emitted when the set of missing records changes.
 * - DKIM rotation on an active domain keeps the old selector signing until the new record is
 *   seen by a check, then the old key is deleted. On a domain that is not active the key is
 *   simply replaced.
 */
import { generateKeyPair } from "node:crypto";
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { promisify } from "node:util";
import type { RequestMeta } from "../../../access/http";
import type { Principal } from "../../../access/principal";
import type { AppContext } from "../../../context";
import { HOUR, MINUTE } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { ApiError, conflict, invalidField, notFound } from "../../../core/errors";
import { isUuid, randomHex, uuid } from "../../../core/ids";
import { isUniqueViolation } from "../../../core/store/sql";
import type { ServiceDeps } from "../../module";
import { audit } from "../../platform/audit";
import { createMailResolver, txtHas, type MailResolver } from "./dns";
import * as store from "./store";

const genKeyPair = promisify(generateKeyPair);

export const INTENTS = ["send", "receive", "send_receive"] as const;
export const STATUSES = ["pending", "active", "failed"] as const;
export const FQDN_MAX = 253;
export const DNS_PROVIDER_MAX = 100;
/** Pending longer than this without the required records: failed. */
export const PENDING_TIMEOUT_MS = 72 * HOUR;
/** Check cadence of the schedule. */
export const PENDING_EVERY_MS = 10 * MINUTE;
export const ACTIVE_EVERY_MS = 24 * HOUR;
export const RECORD_TTL = 3600;
/** The ownership TXT record lives at this label under the domain. */
export const OWNERSHIP_LABEL = "_bunker-verification";

export type Purpose = "ownership" | "spf" | "dkim" | "dmarc" | "mx";

export interface DnsInstruction {
  purpose: Purpose;
  type: "TXT" | "MX";
  host: string;
  value: string;
  ttl: number;
  priority: number;
  /** Needed for the domain to become active (dmarc: recommended only). */
  required: boolean;
  note: string | null;
}

export interface CheckResult {
  type: "TXT" | "MX";
  host: string;
  required: boolean;
  found: boolean;
  expected: string;
  observed: string[];
  /** The lookup failed (timeout, SERVFAIL): found is false because nothing could be read. */
  error?: string;
}

export type CheckResults = Partial<Record<Purpose | "dkim_previous", CheckResult>>;

export interface DomainView {
  id: string;
  seq_id: string;
  workspace_id: string;
  owner_account_id: string | null;
  fqdn: string;
  intent: store.DomainIntent;
  status: store.DomainStatus;
  verification_token: string;
  test_token: string;
  test_address: string;
  test_received_at: string | null;
  dkim_selector: string;
  dkim_public_key: string;
  /** The selector that keeps signing while a rotation waits for the new record; null otherwise. */
  dkim_previous_selector: string | null;
  dns_provider: string | null;
  dns_check_results: CheckResults;
  last_dns_check_at: string | null;
  verified_at: string | null;
  failed_at: string | null;
  created_at: string;
  updated_at: string;
  dns_instructions: DnsInstruction[];
}

/** What the sending part needs to sign mail from an active domain. */
export interface SendDomain {
  id: string;
  workspace_id: string;
  fqdn: string;
  intent: store.DomainIntent;
  /** The selector and key that sign now (the previous ones while a rotation is pending). */
  dkim_selector: string;
  dkim_private_key_pem: string;
}

/** A check a later part registers: a reason when the domain is in use (DELETE answers 409 DOMAIN_IN_USE), else null. */
export type DomainInUseCheck = (t: Sql, domain: { id: string; workspace_id: string; fqdn: string }) => Promise<string | null>;

const sends = (i: store.DomainIntent) => i === "send" || i === "send_receive";
const receives = (i: store.DomainIntent) => i === "receive" || i === "send_receive";

/** Splits a TXT value into character-strings of at most 255 bytes, written as the quoted zone-file form when more than one. */
export function splitTxt(value: string): string {
  const bytes = Buffer.from(value, "utf8");
  if (bytes.length <= 255) return value;
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i += 255) parts.push(`"${bytes.subarray(i, i + 255).toString("utf8")}"`);
  return parts.join(" ");
}

/** The base64 key of a PEM public key (the DKIM p= tag). */
const pemBody = (pem: string) => pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");

export const dkimValue = (publicPem: string) => `v=DKIM1; k=rsa; p=${pemBody(publicPem)}`;
/** The p= tag of a DKIM record ("" when absent). */
const dkimP = (s: string) => (/(?:^|;)\s*p\s*=\s*([^;]*)/.exec(s)?.[1] ?? "").replace(/\s+/g, "");

const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Validates and normalises a domain name: IDNA to ASCII, lower case, one trailing dot
 * dropped. Throws 400 VALIDATION_ERROR (field fqdn) with the reason.
 */
export function normaliseFqdn(input: unknown): string {
  if (typeof input !== "string" || input.trim() === "") throw invalidField("fqdn", "required");
  let s = input.trim();
  if (s.endsWith(".")) s = s.slice(0, -1);
  const bare = s.startsWith("[") && s.endsWith("]") ? s.slice(1, -1) : s;
  if (isIP(bare) !== 0) throw invalidField("fqdn", "must be a domain name, not an IP address");
  if (s.length > FQDN_MAX * 4 || /[\s/\\:@?#*[\]]/.test(s)) throw invalidField("fqdn", "must be a domain name (letters, digits, hyphens and dots)");
  const ascii = domainToASCII(s).toLowerCase();
  if (!ascii) throw invalidField("fqdn", "is not a valid internationalised domain name");
  if (ascii.length > FQDN_MAX) throw invalidField("fqdn", `at most ${FQDN_MAX} characters (in ASCII form)`);
  const labels = ascii.split(".");
  if (labels.length < 2) throw invalidField("fqdn", "needs at least two labels (e.g. mail.example.com)");
  for (const l of labels) {
    if (!LABEL_RE.test(l)) throw invalidField("fqdn", `label "${l}" must be 1-63 letters, digits or hyphens, not starting or ending with a hyphen`);
  }
  // An all-numeric top label is an IPv4 address in disguise (1.2.3.4 variants, 0x..., etc.).
  if (/^[0-9]+$/.test(labels[labels.length - 1]) || /^0x[0-9a-f]*$/.test(labels[labels.length - 1])) {
    throw invalidField("fqdn", "must be a domain name, not an IP address");
  }
  return ascii;
}

export class DomainService {
  readonly resolver: MailResolver;
  private readonly inUseChecks: DomainInUseCheck[] = [];

  constructor(
    private readonly deps: ServiceDeps,
    resolver?: MailResolver,
  ) {
    this.resolver = resolver ?? createMailResolver(deps.ctx.config.dnsServers);
  }

  private get ctx(): AppContext {
    return this.deps.ctx;
  }

  /** Later parts (mailboxes, waitlist settings) refuse the delete of a domain they use. */
  registerInUseCheck(check: DomainInUseCheck): void {
    this.inUseChecks.push(check);
  }

  // ------------------------------------------------------------------ views

  instructions(r: Pick<store.DomainRow, "fqdn" | "intent" | "verification_token" | "dkim_selector" | "dkim_public_key">): DnsInstruction[] {
    const host = this.ctx.config.mailHostname;
    const out: DnsInstruction[] = [
      {
        purpose: "ownership",
        type: "TXT",
        host: `${OWNERSHIP_LABEL}.${r.fqdn}`,
        value: `bunker-verification=${r.verification_token}`,
        ttl: RECORD_TTL,
        priority: 0,
        required: true,
        note: "Proves that this workspace controls the domain.",
      },
    ];
    if (sends(r.intent)) {
      out.push(
        {
          purpose: "spf",
          type: "TXT",
          host: r.fqdn,
          value: `v=spf1 a:${host} ~all`,
          ttl: RECORD_TTL,
          priority: 0,
          required: true,
          note: `If the domain already has an SPF record, add "a:${host}" to it instead of publishing a second one (one v=spf1 record per name).`,
        },
        {
          purpose: "dkim",
          type: "TXT",
          host: `${r.dkim_selector}._domainkey.${r.fqdn}`,
          value: splitTxt(dkimValue(r.dkim_public_key)),
          ttl: RECORD_TTL,
          priority: 0,
          required: true,
          note: "One TXT record made of several quoted strings of at most 255 bytes each; most DNS providers take the whole value and split it themselves.",
        },
        {
          purpose: "dmarc",
          type: "TXT",
          host: `_dmarc.${r.fqdn}`,
          value: "v=DMARC1; p=none;",
          ttl: RECORD_TTL,
          priority: 0,
          required: false,
          note: "Recommended starter policy: p=none only monitors. Add rua=mailto:... for reports, and move to p=quarantine or p=reject once reports show all your mail passes. Keep an existing DMARC record.",
        },
      );
    }
    if (receives(r.intent)) {
      out.push({
        purpose: "mx",
        type: "MX",
        host: r.fqdn,
        value: host,
        ttl: RECORD_TTL,
        priority: 10,
        required: true,
        note: "Routes mail for the domain to this server's SMTP listener.",
      });
    }
    return out;
  }

  view(r: store.DomainRow): DomainView {
    return {
      id: r.id,
      seq_id: String(r.seq),
      workspace_id: r.workspace_id,
      owner_account_id: r.owner_account_id,
      fqdn: r.fqdn,
      intent: r.intent,
      status: r.status,
      verification_token: r.verification_token,
      test_token: r.test_token,
      test_address: `bunker-test-${r.test_token}@${r.fqdn}`,
      test_received_at: r.test_received_at,
      dkim_selector: r.dkim_selector,
      dkim_public_key: r.dkim_public_key,
      dkim_previous_selector: r.dkim_prev_selector,
      dns_provider: r.dns_provider,
      dns_check_results: JSON.parse(r.dns_check_results) as CheckResults,
      last_dns_check_at: r.last_dns_check_at,
      verified_at: r.verified_at,
      failed_at: r.failed_at,
      created_at: r.created_at,
      updated_at: r.updated_at,
      dns_instructions: this.instructions(r),
    };
  }

  /** The data of domain.* webhook events. */
  eventData(r: store.DomainRow, extra: Record<string, unknown> = {}) {
    return {
      id: r.id,
      seq_id: String(r.seq),
      workspace_id: r.workspace_id,
      fqdn: r.fqdn,
      intent: r.intent,
      status: r.status,
      verified_at: r.verified_at,
      last_dns_check_at: r.last_dns_check_at,
      created_at: r.created_at,
      ...extra,
    };
  }

  // ------------------------------------------------------------------ access

  private async workspace(p: Principal, workspaceId: string, action: string) {
    const { workspace } = await this.deps.platform.authz.authorizeWorkspace(this.ctx.db, p, { id: workspaceId }, action);
    await this.deps.platform.authz.requireService(this.ctx.db, workspace.id, "mail");
    return workspace;
  }

  private async inWorkspace(db: Sql, workspaceId: string, id: string): Promise<store.DomainRow> {
    const r = isUuid(id) ? await store.domainInWorkspace(db, workspaceId, id.toLowerCase()) : null;
    if (!r) throw notFound("Domain");
    return r;
  }

  // ------------------------------------------------------------------ keys

  private selectorFor(taken: (string | null)[]): string {
    const base = `bk${this.ctx.clock.iso().slice(0, 7).replace("-", "")}`;
    if (!taken.includes(base)) return base;
    for (let c = 98; c <= 122; c++) {
      const s = `${base}${String.fromCharCode(c)}`;
      if (!taken.includes(s)) return s;
    }
    return `${base}${randomHex(3)}`;
  }

  private async newKey(): Promise<{ publicPem: string; privateEnc: string }> {
    const { publicKey, privateKey } = await genKeyPair("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
    });
    return { publicPem: publicKey as unknown as string, privateEnc: this.ctx.secretBox.encrypt(privateKey as unknown as string) };
  }

  // ------------------------------------------------------------------ operations

  async create(p: Principal, workspaceId: string, input: { fqdn?: unknown; intent?: unknown }, meta?: RequestMeta): Promise<DomainView> {
    const ws = await this.workspace(p, workspaceId, "mail.domain.write");
    const fqdn = normaliseFqdn(input.fqdn);
    const intent = input.intent === undefined ? "send" : input.intent;
    if (typeof intent !== "string" || !(INTENTS as readonly string[]).includes(intent)) throw invalidField("intent", `one of ${INTENTS.join(", ")}`);
    const exists = () => conflict(`The domain ${fqdn} is already in this workspace`, "DOMAIN_EXISTS");
    if (await store.domainByFqdn(this.ctx.db, ws.id, fqdn)) throw exists();
    const key = await this.newKey();
    const id = uuid();
    const now = this.ctx.clock.iso();
    try {
      await tx(this.ctx.db, async (t) => {
        if (await store.domainByFqdn(t, ws.id, fqdn)) throw exists();
        const seq = await store.nextSeq(t, ws.id);
        const row: store.DomainRow = {
          id,
          workspace_id: ws.id,
          seq,
          owner_account_id: p.kind === "api_key" ? p.createdBy : p.accountId,
          fqdn,
          intent: intent as store.DomainIntent,
          status: "pending",
          verification_token: randomHex(16),
          test_token: randomHex(8),
          test_received_at: null,
          dkim_selector: this.selectorFor([]),
          dkim_public_key: key.publicPem,
          dkim_private_key: key.privateEnc,
          dkim_prev_selector: null,
          dkim_prev_public_key: null,
          dkim_prev_private_key: null,
          dns_provider: null,
          dns_check_results: "{}",
          last_dns_check_at: null,
          dns_check_lease_until: null,
          verified_at: null,
          failed_at: null,
          created_at: now,
          updated_at: now,
        };
        await store.insertDomain(t, row);
        await this.deps.webhooks.engine.emit(t, { product: "mail", scopeId: ws.id }, "domain.created", this.eventData(row));
        await audit(t, this.ctx, { actor: p, action: "mail.domain.create", workspaceId: ws.id, target: { type: "mail_domain", id }, meta, metadata: { fqdn, intent } });
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw exists();
      throw e;
    }
    return this.view((await store.domainById(this.ctx.db, id))!);
  }

  async list(p: Principal, workspaceId: string): Promise<{ data: DomainView[] }> {
    const ws = await this.workspace(p, workspaceId, "mail.domain.read");
    return { data: (await store.listDomains(this.ctx.db, ws.id)).map((r) => this.view(r)) };
  }

  async get(p: Principal, workspaceId: string, id: string): Promise<DomainView> {
    const ws = await this.workspace(p, workspaceId, "mail.domain.read");
    return this.view(await this.inWorkspace(this.ctx.db, ws.id, id));
  }

  async update(p: Principal, workspaceId: string, id: string, input: { dns_provider?: unknown }, meta?: RequestMeta): Promise<DomainView> {
    const ws = await this.workspace(p, workspaceId, "mail.domain.write");
    const patch: store.DomainPatch = {};
    if (input.dns_provider !== undefined) {
      const v = input.dns_provider;
      if (v === null) patch.dns_provider = null;
      else if (typeof v !== "string") throw invalidField("dns_provider", "must be a string or null");
      else {
        const s = v.trim();
        if (s.length < 1 || s.length > DNS_PROVIDER_MAX) throw invalidField("dns_provider", `1-${DNS_PROVIDER_MAX} characters after trimming (null clears it)`);
        patch.dns_provider = s;
      }
    }
    return tx(this.ctx.db, async (t) => {
      const r = await this.inWorkspace(t, ws.id, id);
      if (Object.keys(patch).length === 0) return this.view(r);
      await store.updateDomain(t, r.id, patch, this.ctx.clock.iso());
      await audit(t, this.ctx, { actor: p, action: "mail.domain.update", workspaceId: ws.id, target: { type: "mail_domain", id: r.id }, meta, metadata: { fields: Object.keys(patch) } });
      return this.view((await store.domainById(t, r.id))!);
    });
  }

  async remove(p: Principal, workspaceId: string, id: string, meta?: RequestMeta): Promise<void> {
    const ws = await this.workspace(p, workspaceId, "mail.domain.write");
    await tx(this.ctx.db, async (t) => {
      const r = await this.inWorkspace(t, ws.id, id);
      for (const check of this.inUseChecks) {
        const reason = await check(t, { id: r.id, workspace_id: r.workspace_id, fqdn: r.fqdn });
        if (reason) throw new ApiError(409, "DOMAIN_IN_USE", `The domain ${r.fqdn} is in use: ${reason}`);
      }
      await store.deleteDomain(t, r.id);
      await this.deps.webhooks.engine.emit(t, { product: "mail", scopeId: ws.id }, "domain.deleted", this.eventData(r, { deleted_at: this.ctx.clock.iso() }));
      await audit(t, this.ctx, { actor: p, action: "mail.domain.delete", workspaceId: ws.id, target: { type: "mail_domain", id: r.id }, meta, metadata: { fqdn: r.fqdn } });
    });
  }

  /** New selector and key. An active domain keeps signing with the old one until the new record is seen. */
  async rotateDkim(p: Principal, workspaceId: string, id: string, meta?: RequestMeta): Promise<DomainView> {
    const ws = await this.workspace(p, workspaceId, "mail.domain.write");
    await this.inWorkspace(this.ctx.db, ws.id, id);
    const key = await this.newKey();
    return tx(this.ctx.db, async (t) => {
      const r = await this.inWorkspace(t, ws.id, id);
      const selector = this.selectorFor([r.dkim_selector, r.dkim_prev_selector]);
      const patch: store.DomainPatch = { dkim_selector: selector, dkim_public_key: key.publicPem, dkim_private_key: key.privateEnc };
      // The key that signs now keeps signing: the current one, or the previous one when an
      // earlier rotation has not been seen yet.
      if (r.status === "active" && r.dkim_prev_selector === null) {
        patch.dkim_prev_selector = r.dkim_selector;
        patch.dkim_prev_public_key = r.dkim_public_key;
        patch.dkim_prev_private_key = r.dkim_private_key;
      } else if (r.status !== "active") {
        patch.dkim_prev_selector = null;
        patch.dkim_prev_public_key = null;
        patch.dkim_prev_private_key = null;
      }
      await store.updateDomain(t, r.id, patch, this.ctx.clock.iso());
      await audit(t, this.ctx, {
        actor: p,
        action: "mail.domain.dkim_rotate",
        workspaceId: ws.id,
        target: { type: "mail_domain", id: r.id },
        meta,
        metadata: { from: r.dkim_selector, to: selector },
      });
      return this.view((await store.domainById(t, r.id))!);
    });
  }

  /** POST /verify: checks the records now and applies the outcome; returns the domain. */
  async verify(p: Principal, workspaceId: string, id: string): Promise<DomainView> {
    const ws = await this.workspace(p, workspaceId, "mail.domain.write");
    const r = await this.inWorkspace(this.ctx.db, ws.id, id);
    const results = await this.check(r);
    await this.apply(r.id, results, { manual: true });
    return this.view((await store.domainById(this.ctx.db, r.id))!);
  }

  // ------------------------------------------------------------------ DNS checks

  /** Looks up every record of the domain (its instructions, plus the previous DKIM selector during a rotation). */
  async check(r: store.DomainRow): Promise<CheckResults> {
    const results: CheckResults = {};
    const txt = new Map<string, Promise<{ records: string[]; chunks: string[] } | Error>>();
    const lookupTxt = (host: string) => {
      if (!txt.has(host)) txt.set(host, this.resolver.resolveTxt(host).catch((e: Error) => e));
      return txt.get(host)!;
    };
    const tasks = this.instructions(r).map(async (ins) => {
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
              const want = this.ctx.config.mailHostname.toLowerCase();
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
    const now = this.ctx.clock.iso();
    const nowMs = this.ctx.clock.nowMs();
    await tx(this.ctx.db, async (t) => {
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
      let event: Record<string, unknown> | null = null;
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
        await this.deps.webhooks.engine.emit(t, { product: "mail", scopeId: r.workspace_id }, "domain.updated", this.eventData(updated, event));
      }
    });
  }

  /** The scheduled check: claims due domains (pending every 10 min, active daily), checks and applies. Returns how many were checked. */
  async runDueChecks(limit = 50): Promise<number> {
    const nowMs = this.ctx.clock.nowMs();
    const iso = (ms: number) => new Date(ms).toISOString();
    const claimed = await tx(this.ctx.db, (t) =>
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
        this.ctx.log.warn("mail domain DNS check failed", { domain_id: r.id, error: (e as Error).message });
      }
    }
    return claimed.length;
  }

  // ------------------------------------------------------------------ for later parts

  /** A domain of the workspace by id (null when absent or another workspace's). */
  async domainById(db: Sql, workspaceId: string, id: string): Promise<DomainView | null> {
    const r = isUuid(id) ? await store.domainInWorkspace(db, workspaceId, id.toLowerCase()) : null;
    return r ? this.view(r) : null;
  }

  /** The workspace's active, send-capable domain with this name, with the key that signs now; null otherwise. */
  async activeSendDomain(db: Sql, workspaceId: string, fqdn: string): Promise<SendDomain | null> {
    let name: string;
    try {
      name = normaliseFqdn(fqdn);
    } catch {
      return null;
    }
    const r = await store.activeSendDomain(db, workspaceId, name);
    if (!r) return null;
    const rotating = r.dkim_prev_selector !== null && r.dkim_prev_private_key !== null;
    return {
      id: r.id,
      workspace_id: r.workspace_id,
      fqdn: r.fqdn,
      intent: r.intent,
      dkim_selector: rotating ? r.dkim_prev_selector! : r.dkim_selector,
      dkim_private_key_pem: this.ctx.secretBox.decrypt(rotating ? r.dkim_prev_private_key! : r.dkim_private_key),
    };
  }

  /** Part 2: mail to test_address arrived. */
  async markTestReceived(db: Sql, domainId: string): Promise<void> {
    await store.updateDomain(db, domainId, { test_received_at: this.ctx.clock.iso() }, this.ctx.clock.iso());
  }
}
