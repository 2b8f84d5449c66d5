/**
 * The waitlist service as a module (issue 16): public sign-up and configuration, the admin
 * routes (settings, waitlists, entries), the notification outbox job, the view counter
 * flush, the webhook event catalogue and the workspace webhook scope (shared and legacy
 * routes under /waitlist/v1/workspaces/{workspace_id}/webhooks). It uses the Auth and mail
 * services through their ports (bridges.ts), and keeps a mail domain its settings name from
 * being deleted (the mail.domain-in-use port it provides).
 */
import { Elysia } from "elysia";
import { ApiError } from "../../core/errors";
import { defineService } from "../../kernel/module";
import { workspaceScope } from "../../kernel/webhooks";
import { bridges } from "./bridges";
import { EntryService } from "./entries/service";
import { WAITLIST_WEBHOOKS } from "./events";
import { NOTIFY_JOB, NotificationWorker } from "./entries/notify";
import { PublicConfig, VIEWS_JOB } from "./public/config";
import { publicRoutes } from "./public/routes";
import { emitReferralUpdates, REFERRALS_JOB } from "./entries/referrals";
import { adminRoutes } from "./routes";
import { Uuid } from "./schemas";
import { domainUsed, renameWorkspace } from "./waitlists";
import { variantRoutes } from "./variants/routes";
import { VariantService } from "./variants/service";
import { PUBLIC_TOPIC, WAITLIST_ACTIONS, WaitlistService } from "./waitlists/service";
import { migrations } from "./migrations";
import { WAITLIST_ENV_SETTINGS } from "./env-settings";

export const waitlistModule = defineService({
  name: "waitlist",
  migrations,
  settings: WAITLIST_ENV_SETTINGS,
  // Admin routes take workspace ids as UUIDs of any case (the route schemas), rows hold them lower-case.
  workspaceIdsAnyCase: true,
  description: "Waitlists with approval and invites",
  prefix: "/waitlist",
  openapi: { title: "Bunker waitlist", description: "Waitlists with approval and invites.", version: "v0.1.0" },
  actions: WAITLIST_ACTIONS,
  webhooks: WAITLIST_WEBHOOKS,
  create: (d) => {
    const b = bridges(d);
    const worker = new NotificationWorker(d, b);
    const waitlists = new WaitlistService(d, b, worker);
    const publicConfig = new PublicConfig(d.ctx, async (workspaceId) => {
      try {
        await d.tenancy.authz.requireService(d.ctx.db, workspaceId, d.name);
        return true;
      } catch (e) {
        if (e instanceof ApiError && e.status === 403) return false;
        throw e;
      }
    });
    return { waitlists, entries: new EntryService(d, waitlists), variants: new VariantService(d, waitlists, publicConfig), worker, publicConfig };
  },
  routes: (s, d) =>
    new Elysia({ name: "waitlist-routes" })
      .use(publicRoutes(s.entries, s.publicConfig))
      .use(adminRoutes(s, { principals: d.tenancy.authz, idempotency: d.ctx.idempotency }))
      .use(variantRoutes(s.variants, { principals: d.tenancy.authz })),
  // A mail domain named by a workspace's waitlist settings cannot be deleted (409 DOMAIN_IN_USE).
  provides: {
    "mail.domain-in-use": () => async (t, domain) => ((await domainUsed(t, domain.id)) ? "the workspace's waitlist settings use it as default sender domain" : null),
  },
  jobs: (s, d) => [
    { name: REFERRALS_JOB, schedule: "*/2 * * * * *", run: async () => void (await emitReferralUpdates(d)) },
    { name: NOTIFY_JOB, schedule: "*/30 * * * * *", run: async () => void (await s.worker.runDue()) },
    {
      name: VIEWS_JOB,
      schedule: "*/10 * * * * *",
      run: async () => void (await s.publicConfig.flushViews()),
    },
  ],
  subscribe: {
    // Workspace slug renamed: the new slug serves and the old one keeps answering (previous_workspace_slug).
    "workspace.renamed": async (s, e, t) => {
      await renameWorkspace(t, e.data.workspace_id, e.data.old_slug, e.data.new_slug);
      await s.waitlists.m.ctx.caches.changed(t, PUBLIC_TOPIC);
    },
  },
  stop: (s) => s.publicConfig.flushViews(),
  webhookScopes: (_, d) => [{ prefix: "/waitlist/v1/workspaces/:workspace_id", resolve: workspaceScope(d.tenancy, d.name), legacyRoutes: "unlisted", params: { workspace_id: Uuid("The workspace's id") } }],
});
