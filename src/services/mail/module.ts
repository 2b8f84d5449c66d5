/**
 * The mail service as a module. Its routes come with its own issue; today the module
 * carries what exists: the webhook event catalogue and the workspace webhook scope (shared
 * and legacy routes under /mail/v1/workspaces/{workspace_id}/webhooks).
 */
import { defineService } from "../module";
import { workspaceScope } from "../webhooks/scopes";
import { MAIL_WEBHOOKS } from "./events";

export const mailModule = defineService({
  name: "mail",
  description: "Transactional sending, domains and inbound mailboxes",
  prefix: "/mail",
  openapi: { title: "Bunker mail", description: "Transactional sending, domains and inbound mailboxes.", version: "v0.1.0" },
  webhooks: MAIL_WEBHOOKS,
  create: () => ({}),
  webhookScopes: (_, d) => [{ prefix: "/mail/v1/workspaces/:workspace_id", resolve: workspaceScope(d.platform, "mail"), legacyRoutes: true }],
});
