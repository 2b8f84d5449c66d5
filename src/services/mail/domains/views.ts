/**
 * What the domain routes serve: a domain row turned into the record of schemas.ts, whose
 * TypeBox model is the type too (one declaration for the documented and the served shape).
 */
import type { Static } from "@sinclair/typebox";
import { dnsInstructions } from "./records";
import type { Domain } from "./schemas";
import type * as store from "./store";

export type DomainView = Static<typeof Domain>;

/** `mailHostname`: this instance's MX host, which the DNS instructions name (none for the sandbox domain, it needs no DNS). */
export const domainView = (r: store.DomainRow, mailHostname: string): DomainView => ({
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
  dns_check_results: JSON.parse(r.dns_check_results) as DomainView["dns_check_results"],
  last_dns_check_at: r.last_dns_check_at,
  verified_at: r.verified_at,
  failed_at: r.failed_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  dns_instructions: r.sandbox ? [] : dnsInstructions(mailHostname, r),
  sandbox: r.sandbox === 1,
});
