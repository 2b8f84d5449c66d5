/**
 * The waitlist service as a module. Its routes come with its own issue; today the module
 * carries what exists: the webhook event catalogue and the workspace webhook scope (shared
 * and legacy routes under /waitlist/v1/workspaces/{workspace_id}/webhooks).
 */
import { defineService } from "../module";
import { workspaceScope } from "../webhooks/scopes";
import { WAITLIST_WEBHOOKS } from "./events";

export const waitlistModule = defineService({
  name: "waitlist",
  description: "Waitlists with approval and invites",
  prefix: "/waitlist",
  openapi: { title: "Bunker waitlist", description: "Waitlists with approval and invites.", version: "v0.1.0" },
  webhooks: WAITLIST_WEBHOOKS,
  create: () => ({}),
  webhookScopes: (_, d) => [{ prefix: "/waitlist/v1/workspaces/:workspace_id", resolve: workspaceScope(d.platform, "waitlist"), legacyRoutes: true }],
});
