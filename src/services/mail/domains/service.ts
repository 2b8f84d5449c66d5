/**
 * Mail domains (issue 13, "Domains"): a workspace's sending/receiving domains, their DKIM keys
 * and the DNS checks that move them pending -> active (or failed).
 *
 * DomainService is what the routes and the later parts hold. It keeps the domain records
 * themselves (create, list, get, update, delete, and the lookups later parts use) and hands
 * the rest on: checks.ts (DNS checks, POST /verify, the schedule), dkim.ts (keys, selectors,
 * rotation), records.ts (the records to publish), fqdn.ts (domain names).
 *
 * Decisions where the issue and spec are silent (docs/mail.md, "Reference" > "Domains"):
 * - fqdn: IDNA to ASCII (node:url domainToASCII), lower case, one trailing dot dropped (so
 *   "a.example." and "a.example" are the same domain: 409 DOMAIN_EXISTS); at least two labels,
 *   labels of letters, digits and hyphens (1-63, no leading/trailing hyphen), at most 253
 *   characters, an all-numeric last label is refused (IP literals in any form are refused).
 * - Required records, check outcomes and DKIM rotation: see records.ts, checks.ts, dkim.ts.
 */
import type { RequestMeta } from "../../../access/http";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, conflict, invalidField } from "../../../core/errors";
import { isUuid, randomHex, uuid } from "../../../core/ids";
import { isUniqueViolation } from "../../../core/store/sql";
import type { MailContext } from "../part-context";
import { mailSettings } from "../settings";
import { audit } from "../../../kernel/tenancy";
import { DomainChecks } from "./checks";
import { DomainsContext, type DomainView } from "./context";
import { DkimRotation, dkimSelector, newDkimKey, signingKey } from "./dkim";
import { createMailResolver, type MailResolver } from "./dns";
import { isSandboxName, normaliseFqdn } from "./fqdn";
import * as store from "./store";
import { DNS_PROVIDER_MAX } from "./limits";

export type { DomainView } from "./context";

export const INTENTS = ["send", "receive", "send_receive"] as const;
export const STATUSES = ["pending", "active", "failed"] as const;

/** What the sending part needs to sign mail from an active domain. */
export interface SendDomain {
  id: string;
  workspace_id: string;
  fqdn: string;
  intent: store.DomainIntent;
  /** The selector and key that sign now (the previous ones while a rotation is pending). */
  dkim_selector: string;
  dkim_private_key_pem: string;
  /** The sandbox domain: its mail is delivered on this instance, never relayed (sandbox/). */
  sandbox: boolean;
}

export class DomainService {
  readonly resolver: MailResolver;
  private readonly c: DomainsContext;
  private readonly checks: DomainChecks;
  private readonly dkim: DkimRotation;

  constructor(
    private readonly m: MailContext,
    resolver?: MailResolver,
  ) {
    this.resolver = resolver ?? createMailResolver(mailSettings(m).dnsServers);
    this.c = new DomainsContext(m);
    this.checks = new DomainChecks(this.c, this.resolver);
    this.dkim = new DkimRotation(this.c);
  }

  // ------------------------------------------------------------------ operations

  async create(p: Principal, workspaceId: string, input: { fqdn?: unknown; intent?: unknown }, meta?: RequestMeta): Promise<DomainView> {
    const ws = await this.m.guard(p, workspaceId, "mail.domain.write");
    const fqdn = normaliseFqdn(input.fqdn);
    if (isSandboxName(fqdn, this.m.ctx.config.mailHostname)) throw invalidField("fqdn", `names under sandbox.${this.m.ctx.config.mailHostname} are for sandbox domains (POST /domains/sandbox)`);
    const intent = input.intent === undefined ? "send" : input.intent;
    if (typeof intent !== "string" || !(INTENTS as readonly string[]).includes(intent)) throw invalidField("intent", `one of ${INTENTS.join(", ")}`);
    const exists = () => conflict(`The domain ${fqdn} is already in this workspace`, "DOMAIN_EXISTS");
    if (await store.domainByFqdn(this.m.ctx.db, ws.id, fqdn)) throw exists();
    try {
      const row = await this.insert(p, ws.id, { fqdn, intent: intent as store.DomainIntent, sandbox: false }, meta, async (t) => {
        if (await store.domainByFqdn(t, ws.id, fqdn)) throw exists();
      });
      return this.c.view(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw exists();
      throw e;
    }
  }

  /**
   * Writes a new domain with a fresh DKIM key, its domain.created event and audit entry in
   * one transaction (`check` runs first inside it). A sandbox domain is active from the
   * start and never checked; every other domain starts pending.
   */
  async insert(
    p: Principal,
    workspaceId: string,
    d: { fqdn: string; intent: store.DomainIntent; sandbox: boolean },
    meta: RequestMeta | undefined,
    check: (t: Sql) => Promise<void>,
  ): Promise<store.DomainRow> {
    const key = await newDkimKey(this.m.ctx);
    const id = uuid();
    const now = this.m.ctx.clock.iso();
    await tx(this.m.ctx.db, async (t) => {
      await check(t);
      const seq = await store.nextSeq(t, workspaceId);
      const row: store.DomainRow = {
        id,
        workspace_id: workspaceId,
        seq,
        owner_account_id: p.kind === "api_key" ? p.createdBy : p.accountId,
        fqdn: d.fqdn,
        intent: d.intent,
        status: d.sandbox ? "active" : "pending",
        verification_token: randomHex(16),
        test_token: randomHex(8),
        test_received_at: null,
        dkim_selector: dkimSelector(this.m.ctx, []),
        dkim_public_key: key.publicPem,
        dkim_private_key: key.privateEnc,
        dkim_prev_selector: null,
        dkim_prev_public_key: null,
        dkim_prev_private_key: null,
        dns_provider: null,
        dns_check_results: "{}",
        last_dns_check_at: null,
        dns_check_lease_until: null,
        verified_at: d.sandbox ? now : null,
        failed_at: null,
        created_at: now,
        updated_at: now,
        sandbox: d.sandbox ? 1 : 0,
      };
      await store.insertDomain(t, row);
      await this.m.emit(t, workspaceId, "domain.created", this.c.eventData(row));
      await audit(t, this.m.ctx, {
        actor: p,
        action: "mail.domain.create",
        workspaceId,
        target: { type: "mail_domain", id },
        meta,
        metadata: { fqdn: d.fqdn, intent: d.intent, ...(d.sandbox ? { sandbox: true } : {}) },
      });
    });
    return (await store.domainById(this.m.ctx.db, id))!;
  }

  async list(p: Principal, workspaceId: string): Promise<{ data: DomainView[] }> {
    const ws = await this.m.guard(p, workspaceId, "mail.domain.read");
    return { data: (await store.listDomains(this.m.ctx.db, ws.id)).map((r) => this.c.view(r)) };
  }

  async get(p: Principal, workspaceId: string, id: string): Promise<DomainView> {
    const ws = await this.m.guard(p, workspaceId, "mail.domain.read");
    return this.c.view(await this.c.inWorkspace(this.m.ctx.db, ws.id, id));
  }

  async update(p: Principal, workspaceId: string, id: string, input: { dns_provider?: unknown }, meta?: RequestMeta): Promise<DomainView> {
    const ws = await this.m.guard(p, workspaceId, "mail.domain.write");
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
    return tx(this.m.ctx.db, async (t) => {
      const r = await this.c.inWorkspace(t, ws.id, id);
      if (Object.keys(patch).length === 0) return this.c.view(r);
      await store.updateDomain(t, r.id, patch, this.m.ctx.clock.iso());
      await audit(t, this.m.ctx, { actor: p, action: "mail.domain.update", workspaceId: ws.id, target: { type: "mail_domain", id: r.id }, meta, metadata: { fields: Object.keys(patch) } });
      return this.c.view((await store.domainById(t, r.id))!);
    });
  }

  async remove(p: Principal, workspaceId: string, id: string, meta?: RequestMeta): Promise<void> {
    const ws = await this.m.guard(p, workspaceId, "mail.domain.write");
    await tx(this.m.ctx.db, async (t) => {
      const r = await this.c.inWorkspace(t, ws.id, id);
      // Whoever uses a domain refuses its delete (mail's mailboxes, the waitlist's settings): the mail.domain-in-use port (../ports.ts).
      for (const check of this.m.ports("mail.domain-in-use")) {
        const reason = await check(t, { id: r.id, workspace_id: r.workspace_id, fqdn: r.fqdn });
        if (reason) throw new ApiError(409, "DOMAIN_IN_USE", `The domain ${r.fqdn} is in use: ${reason}`);
      }
      await store.deleteDomain(t, r.id);
      await this.m.emit(t, ws.id, "domain.deleted", this.c.eventData(r, { deleted_at: this.m.ctx.clock.iso() }));
      await audit(t, this.m.ctx, { actor: p, action: "mail.domain.delete", workspaceId: ws.id, target: { type: "mail_domain", id: r.id }, meta, metadata: { fqdn: r.fqdn } });
    });
  }

  /** POST /dkim/rotate (dkim.ts). */
  rotateDkim(p: Principal, workspaceId: string, id: string, meta?: RequestMeta): Promise<DomainView> {
    return this.dkim.rotate(p, workspaceId, id, meta);
  }

  /** POST /verify (checks.ts). */
  verify(p: Principal, workspaceId: string, id: string): Promise<DomainView> {
    return this.checks.verify(p, workspaceId, id);
  }

  /** The scheduled DNS check job (checks.ts). */
  runDueChecks(limit?: number): Promise<number> {
    return this.checks.runDueChecks(limit);
  }

  // ------------------------------------------------------------------ for later parts

  /** A domain of the workspace by id (null when absent or another workspace's). */
  async domainById(db: Sql, workspaceId: string, id: string): Promise<DomainView | null> {
    const r = isUuid(id) ? await store.domainInWorkspace(db, workspaceId, id.toLowerCase()) : null;
    return r ? this.c.view(r) : null;
  }

  /** The workspace's sandbox domain (sandbox/), or null. */
  async sandboxOf(db: Sql, workspaceId: string): Promise<DomainView | null> {
    const r = await store.sandboxDomain(db, workspaceId);
    return r ? this.c.view(r) : null;
  }

  /** True when some workspace's sandbox domain has this name. */
  sandboxNameTaken(db: Sql, fqdn: string): Promise<boolean> {
    return store.sandboxFqdnTaken(db, fqdn);
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
    const key = signingKey(this.m.ctx, r);
    return { id: r.id, workspace_id: r.workspace_id, fqdn: r.fqdn, intent: r.intent, dkim_selector: key.selector, dkim_private_key_pem: key.privateKeyPem, sandbox: r.sandbox === 1 };
  }

  /** Part 2: mail to test_address arrived. */
  async markTestReceived(db: Sql, domainId: string): Promise<void> {
    await store.updateDomain(db, domainId, { test_received_at: this.m.ctx.clock.iso() }, this.m.ctx.clock.iso());
  }
}
