/**
 * What the domain modules (service.ts, checks.ts, dkim.ts) share on top of the module
 * context (m): the API view of a domain (views.ts, with this instance's mail host), the data of domain.* events, and the lookup of a
 * domain in the caller's workspace (404 otherwise).
 */
import type { Sql } from "../../../core/db";
import { notFound } from "../../../core/errors";
import type { MailContext } from "../part-context";
import { dnsInstructions, type DnsInstruction } from "./records";
import * as store from "./store";
import { domainView, type DomainView } from "./views";

export type { DomainView };

export class DomainsContext {
  constructor(readonly m: MailContext) {}

  instructions(r: Parameters<typeof dnsInstructions>[1]): DnsInstruction[] {
    return dnsInstructions(this.m.ctx.config.mailHostname, r);
  }

  view(r: store.DomainRow): DomainView {
    return domainView(r, this.m.ctx.config.mailHostname);
  }

  /** The data of domain.* webhook events. */
  eventData<X extends object = object>(r: store.DomainRow, extra: X = {} as X) {
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
      sandbox: r.sandbox === 1,
      ...extra,
    };
  }

  /** A domain of the path: a UUID of any case (the route schema's check). */
  async inWorkspace(db: Sql, workspaceId: string, id: string): Promise<store.DomainRow> {
    const r = await store.domainInWorkspace(db, workspaceId, id.toLowerCase());
    if (!r) throw notFound("Domain");
    return r;
  }
}
