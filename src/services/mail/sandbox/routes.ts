/**
 * Routes of the mail sandbox part, under /mail/v1/workspaces/{workspace_id}:
 * POST /domains/sandbox, GET /outbox, GET /outbox/{id}.
 */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import type { ServiceDeps } from "../../../kernel/module";
import { Domain } from "../domains/schemas";
import { Uuid, WorkspaceParams } from "../schemas";
import { t } from "../../../core/schema";
import { ErrorBody, OUTBOX_NOTE, OutboxList, OutboxMessage, OutboxQuery } from "./schemas";
import type { SandboxService } from "./service";

const BASE = "/mail/v1/workspaces/:workspace_id";
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const OutboxParams = t.Object({ workspace_id: Uuid("The workspace's id"), id: Uuid("The captured message's id") });

export function sandboxRoutes(svc: SandboxService, deps: ServiceDeps) {
  return new Elysia({ name: "mail-sandbox-routes" })
    .use(principalPlugin(deps.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .post(
      `${BASE}/domains/sandbox`,
      async (c) => {
        const r = await svc.createDomain(requirePrincipal(c.principal), c.params.workspace_id, c.meta);
        c.set.status = r.created ? 201 : 200;
        return r.domain;
      },
      {
        params: WorkspaceParams,
        response: { 200: Domain, 201: Domain, ...errors },
        detail: {
          tags: ["Mail: domains"],
          summary: "Give the workspace its sandbox domain (action mail.domain.write); 201, then 200 with the same domain",
          description:
            "For trying Bunker out, not for production: one per workspace, named <6 hex digits>.sandbox.<MAIL_HOSTNAME> (never resolvable on the internet), " +
            "intent send_receive, active at once with sandbox true and no dns_instructions; DNS checks never run for it. Send from any address on it and create mailboxes on it " +
            "with the ordinary routes. Its mail never leaves this instance: a recipient that is an active mailbox here gets the message through the inbound path " +
            "(email.received), every other recipient's message is caught in the dev outbox (GET /outbox). The message log shows them as delivered with sandbox true and " +
            "delivered_to mailbox or outbox. Rate limit, suppressions and recipient limits apply as for any domain. Delete it like any domain. Emits domain.created the first time.",
        },
      },
    )
    .get(`${BASE}/outbox`, (c) => svc.list(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: WorkspaceParams,
      query: OutboxQuery,
      response: { 200: OutboxList, ...errors },
      detail: { tags: ["Mail: sandbox outbox"], summary: "List the dev outbox, newest first (action mail.message.read)", description: OUTBOX_NOTE },
    })
    .get(`${BASE}/outbox/:id`, (c) => svc.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.id), {
      params: OutboxParams,
      response: { 200: OutboxMessage, ...errors },
      detail: {
        tags: ["Mail: sandbox outbox"],
        summary: "Read a captured message (action mail.message.read; bodies with mail.message.body.read)",
        description: `${OUTBOX_NOTE} html and text are null unless the caller also holds mail.message.body.read (body_visible says which). Another workspace's id is 404.`,
      },
    });
}
