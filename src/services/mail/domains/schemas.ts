/** TypeBox models of the mail domains part, shared by its routes and the OpenAPI document. */
import { t } from "../../../core/schema";
import { ErrorBody } from "../../../access/schemas";
import { FQDN_MAX } from "./fqdn";
import { DNS_PROVIDER_MAX } from "./limits";

export { ErrorBody };

const Intent = t.Union([t.Literal("send"), t.Literal("receive"), t.Literal("send_receive")], { description: "send | receive | send_receive" });
const Status = t.Union([t.Literal("pending"), t.Literal("active"), t.Literal("failed")], { description: "pending | active | failed" });

export const DnsInstruction = t.Object({
  purpose: t.String({ description: "ownership | spf | dkim | dmarc | mx" }),
  type: t.String({ description: "TXT or MX" }),
  host: t.String({ description: "Full name of the record" }),
  value: t.String({ description: 'Record value; a DKIM value longer than 255 bytes is written as quoted strings of at most 255 bytes ("..." "...")' }),
  ttl: t.Number(),
  priority: t.Number({ description: "MX preference (10); 0 for TXT records" }),
  required: t.Boolean({ description: "Needed for the domain to become active (DMARC is recommended only)" }),
  note: t.Nullable(t.String()),
});

export const CheckResult = t.Object({
  type: t.String(),
  host: t.String(),
  required: t.Boolean(),
  found: t.Boolean(),
  expected: t.String(),
  observed: t.Array(t.String(), { description: "The records of that type seen at the host that look relevant (TXT joined from their strings; MX as '<priority> <host>')" }),
  error: t.Optional(t.String({ description: "The lookup failed (e.g. ETIMEOUT); found is false" })),
});

export const Domain = t.Object({
  id: t.String({ description: "UUID" }),
  seq_id: t.String({ description: "Sequential per workspace" }),
  workspace_id: t.String(),
  owner_account_id: t.Nullable(t.String()),
  fqdn: t.String({ description: "ASCII form (IDNA), lower case, no trailing dot" }),
  intent: Intent,
  status: Status,
  verification_token: t.String(),
  test_token: t.String(),
  test_address: t.String({ description: "bunker-test-<test_token>@<fqdn>: mail to it sets test_received_at once the inbound listener sees it" }),
  test_received_at: t.Nullable(t.String()),
  dkim_selector: t.String({ description: "bk<yyyymm>[b-z]" }),
  dkim_public_key: t.String({ description: "PEM public half of the 2048-bit RSA key" }),
  dkim_previous_selector: t.Nullable(t.String({ description: "Selector still signing while a rotation waits for the new record" })),
  dns_provider: t.Nullable(t.String()),
  dns_check_results: t.Record(t.String(), CheckResult, { description: "Last check, by purpose (ownership, spf, dkim, dmarc, mx; dkim_previous during a rotation)" }),
  last_dns_check_at: t.Nullable(t.String()),
  verified_at: t.Nullable(t.String()),
  failed_at: t.Nullable(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
  dns_instructions: t.Array(DnsInstruction, { description: "Empty for the sandbox domain" }),
  sandbox: t.Boolean({
    description:
      "true for the workspace's sandbox domain (POST /domains/sandbox): for trying Bunker out, not for production. Active without DNS; its mail never leaves this instance " +
      "(mail to an active mailbox here is delivered into it, everything else is caught in the dev outbox, GET /outbox). false for every other domain.",
  }),
});

export const DomainList = t.Object({ data: t.Array(Domain) });

export const DomainCreate = t.Object({
  fqdn: t.String({ description: `Domain name (internationalised names allowed; at most ${FQDN_MAX} characters in ASCII form; no IP addresses; a trailing dot is dropped)` }),
  intent: t.Optional(t.String({ description: "send (default) | receive | send_receive" })),
});

export const DomainPatch = t.Object({
  dns_provider: t.Optional(t.Nullable(t.String({ description: `1-${DNS_PROVIDER_MAX} characters after trimming; null clears` }))),
});
