/** Routes of the mail domains part: /mail/v1/workspaces/{workspace_id}/domains... */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { callerKey, idempotent } from "../../../access/idempotent";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import type { ServiceDeps } from "../../../kernel/module";
import { DomainParams, WorkspaceParams } from "../schemas";
import { Domain, DomainCreate, DomainList, DomainPatch, ErrorBody } from "./schemas";
import type { DomainService, DomainView } from "./service";

const tags = ["Mail: domains"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const wsParams = WorkspaceParams;
const domainParams = DomainParams;

export function domainRoutes(domains: DomainService, deps: ServiceDeps) {
  return new Elysia({ prefix: "/mail/v1/workspaces/:workspace_id/domains" })
    .use(principalPlugin(deps.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .get("", (c) => domains.list(requirePrincipal(c.principal), c.params.workspace_id), {
      params: wsParams,
      response: { 200: DomainList, ...errors },
      detail: { tags, summary: "List the workspace's domains (action mail.domain.read)", description: "In seq_id order. 403 when the mail service is off for the workspace." },
    })
    .post("", (c) => {
      const p = requirePrincipal(c.principal);
      return idempotent(deps.ctx.idempotency, c, callerKey(p), async () => ({ status: 201, body: await domains.create(p, c.params.workspace_id, c.body, c.meta) })) as Promise<DomainView>;
    }, {
      params: wsParams,
      body: DomainCreate,
      response: { 201: Domain, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Add a domain (action mail.domain.write)",
        description:
          "Creates the domain as pending with a 2048-bit RSA DKIM key and returns the DNS records to publish (dns_instructions). " +
          "400 for an invalid name (IDNA, IP literal, label rules) or intent; 409 DOMAIN_EXISTS when the workspace has it (a trailing dot is the same name). " +
          "Accepts Idempotency-Key (24 h). Emits domain.created.",
      },
    })
    .get("/:domain_id", (c) => domains.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.domain_id), {
      params: domainParams,
      response: { 200: Domain, ...errors },
      detail: { tags, summary: "Read a domain (action mail.domain.read)", description: "Another workspace's domain is 404." },
    })
    .patch("/:domain_id", (c) => domains.update(requirePrincipal(c.principal), c.params.workspace_id, c.params.domain_id, c.body, c.meta), {
      params: domainParams,
      body: DomainPatch,
      response: { 200: Domain, ...errors },
      detail: { tags, summary: "Change dns_provider (action mail.domain.write)", description: "null clears it." },
    })
    .delete("/:domain_id", async (c) => {
      await domains.remove(requirePrincipal(c.principal), c.params.workspace_id, c.params.domain_id, c.meta);
      c.set.status = 204;
    }, {
      params: domainParams,
      response: { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      detail: {
        tags,
        summary: "Delete a domain (action mail.domain.write); 204",
        description: "409 DOMAIN_IN_USE while a mailbox or a waitlist setting uses it. Its DKIM keys are deleted. Emits domain.deleted.",
        responses: noContent(),
      },
    })
    .post("/:domain_id/verify", (c) => domains.verify(requirePrincipal(c.principal), c.params.workspace_id, c.params.domain_id), {
      params: domainParams,
      response: { 200: Domain, ...errors },
      detail: {
        tags,
        summary: "Check the DNS records now (action mail.domain.write)",
        description:
          "Synchronous: resolves every record, stores dns_check_results and last_dns_check_at, and moves a pending (or failed) domain to active when the required records are there. Emits domain.updated on a status change.",
      },
    })
    .post("/:domain_id/dkim/rotate", (c) => domains.rotateDkim(requirePrincipal(c.principal), c.params.workspace_id, c.params.domain_id, c.meta), {
      params: domainParams,
      response: { 200: Domain, ...errors },
      detail: {
        tags,
        summary: "Rotate the DKIM key (action mail.domain.write)",
        description:
          "New selector and key; publish the new dkim record of dns_instructions. On an active domain the previous selector (dkim_previous_selector) keeps signing until a check sees the new record, then its key is deleted.",
      },
    });
}
