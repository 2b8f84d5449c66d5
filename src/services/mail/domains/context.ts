/**
 * What the domain modules (service.ts, checks.ts, dkim.ts) share on top of the mail part
 * context: the API view of a domain, the data of domain.* events, and the lookup of a
 * domain in the caller's workspace (404 otherwise).
 */
import type { Sql } from "../../../core/db";
import { notFound } from "../../../core/errors";
import { MailPartContext } from "../part-context";
import { dnsInstructions, type CheckResults, type DnsInstruction } from "./records";
import * as store from "./store";

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
  /** The records to publish; none for the sandbox domain (it needs no DNS). */
  dns_instructions: DnsInstruction[];
  /** The workspace's sandbox domain (for trying Bunker out, not for production); false for every other domain. */
  sandbox: boolean;
}

export class DomainsContext extends MailPartContext {
  instructions(r: Parameters<typeof dnsInstructions>[1]): DnsInstruction[] {
    return dnsInstructions(this.ctx.config.mailHostname, r);
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
      dns_instructions: r.sandbox ? [] : this.instructions(r),
      sandbox: r.sandbox === 1,
    };
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
