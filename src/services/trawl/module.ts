/**
 * The extraction-job service (trawl) as a module. Its routes come with its own issue; today
 * the module carries what exists: the webhook event catalogue and the workspace webhook
 * scope (shared and legacy routes under /trawl/v1/workspaces/{workspace_id}/webhooks).
 *
 * The spec names the legacy record "the extraction-job service's", but the same deprecated
 * {scope}/webhooks routes serve mail, waitlist and Auth Apps too, so the record stays the
 * engine's factory (webhooks/legacy.ts, legacy-routes.ts) that each product switches on
 * with legacyRoutes: true, rather than code here that the others would import.
 */
import { defineService } from "../module";
import { workspaceScope } from "../webhooks/scopes";
import { TRAWL_WEBHOOKS } from "./events";

export const trawlModule = defineService({
  name: "trawl",
  description: "AI extraction jobs",
  prefix: "/trawl",
  openapi: { title: "Bunker extraction jobs", description: "AI extraction jobs.", version: "v0.1.0" },
  webhooks: TRAWL_WEBHOOKS,
  create: () => ({}),
  webhookScopes: (_, d) => [{ prefix: "/trawl/v1/workspaces/:workspace_id", resolve: workspaceScope(d.platform, "trawl"), legacyRoutes: true }],
});
