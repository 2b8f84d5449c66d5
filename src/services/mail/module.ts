/**
 * The mail service as a module: its parts (part.ts) in order, the webhook event catalogue
 * and the workspace webhook scope (shared and legacy routes under
 * /mail/v1/workspaces/{workspace_id}/webhooks).
 */
import { Elysia } from "elysia";
import { defineService } from "../../kernel/module";
import { workspaceScope } from "../../kernel/webhooks";
import { MAIL_ACTIONS } from "./actions";
import { contentPart } from "./content/part";
import { domainsPart } from "./domains/part";
import { inboundPart, type InboundService } from "./inbound/part";
import { mailboxesPart } from "./mailboxes/part";
import { MAIL_WEBHOOKS } from "./events";
import { mailSending } from "./ports";
import type { MailboxService } from "./mailboxes/part";
import { messagesPart } from "./messages/part";
import { sandboxPart } from "./sandbox/part";
import { sendingPart } from "./sending/part";
import type { MailPart, MailParts } from "./part";
import { Uuid } from "./schemas";
import { migrations } from "./migrations";
import { MAIL_SETTINGS } from "./settings";

/** In creation order: a part may use those before it. */
const PARTS: readonly MailPart<any>[] = [domainsPart, contentPart, messagesPart, sendingPart, mailboxesPart, inboundPart, sandboxPart];

export const mailModule = defineService({
  name: "mail",
  // Its routes take workspace ids as UUIDs of any case (the route schemas), rows hold them lower-case.
  workspaceIdsAnyCase: true,
  migrations,
  settings: MAIL_SETTINGS,
  description: "Transactional sending, domains and inbound mailboxes",
  prefix: "/mail",
  openapi: { title: "Bunker mail", description: "Transactional sending, domains and inbound mailboxes.", version: "v0.1.0" },
  actions: [...MAIL_ACTIONS],
  webhooks: MAIL_WEBHOOKS,
  create: (d): MailParts => {
    const parts: MailParts = {};
    for (const p of PARTS) parts[p.name] = p.create(d, parts);
    return parts;
  },
  routes: (parts, d) => {
    const app = new Elysia({ name: "mail-routes" });
    for (const p of PARTS) {
      const r = p.routes?.(parts[p.name], d);
      if (r) app.use(r);
    }
    return app;
  },
  // Other services send through mail.sending (the waitlist); mailboxes keep their domain from being deleted.
  provides: {
    "mail.sending": (parts) => mailSending(parts),
    "mail.domain-in-use": (parts) => (t, domain) => (parts.mailboxes as MailboxService).domainInUse(t, domain),
  },
  jobs: (parts, d) => PARTS.flatMap((p) => p.jobs?.(parts[p.name], d) ?? []),
  onWorkspaceDelete: async (parts, t, workspaceId) => {
    for (const p of PARTS) await p.onWorkspaceDelete?.(parts[p.name], t, workspaceId);
  },
  stop: async (parts) => {
    for (const p of [...PARTS].reverse()) await p.stop?.(parts[p.name]);
  },
  // The MX: the SMTP listener hands RCPT checks and accepted messages to the inbound part.
  inbound: (parts) => (parts.inbound as InboundService).handler(),
  webhookScopes: (_, d) => [{ prefix: "/mail/v1/workspaces/:workspace_id", resolve: workspaceScope(d.tenancy, d.name), legacyRoutes: "unlisted", params: { workspace_id: Uuid("The workspace's id") } }],
});
