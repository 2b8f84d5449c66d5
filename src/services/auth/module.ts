/** The Auth service as a module: end-user authentication for your Apps (spec 1). */
import { OAUTH_FORM_TYPES } from "../../core/request-body";
import { defineService } from "../../kernel/module";
import { AUTH_ACTIONS } from "./actions";
import { AUTH_WEBHOOKS } from "./events";
import { authRoutes } from "./routes";
import { Uuid } from "./schemas";
import { AuthService } from "./service";
import { appWebhookScope } from "./webhook-scope";
import { migrations } from "./migrations";
import { authInvites } from "./ports";

export const authModule = defineService({
  name: "auth",
  migrations,
  description: "End-user authentication for your apps: sign-up, sign-in, MFA, tenants, roles",
  prefix: "/auth",
  openapi: { title: "Bunker Auth", description: "End-user authentication for your Apps: /{app_slug}/v1/... and the App administration under /v1/apps.", version: "v1.0.0" },
  // OAuth endpoints take form posts (RFC 6749 §4.4.2, RFC 7662 §2.1; OIDC response_mode=form_post) as well as JSON.
  bodyRoutes: [
    { method: "POST", path: "/auth/:app_slug/v1/auth/oauth/:provider/callback", types: OAUTH_FORM_TYPES },
    // The token endpoint reads its own body, to answer its errors in the OAuth shape (a
    // wrong method too: 405 invalid_request).
    { method: "*", path: "/auth/:app_slug/v1/oauth/token", types: OAUTH_FORM_TYPES, raw: true },
    { method: "POST", path: "/auth/:app_slug/v1/oauth/introspect", types: OAUTH_FORM_TYPES },
  ],
  actions: AUTH_ACTIONS,
  webhooks: AUTH_WEBHOOKS,
  create: (d) => new AuthService(d),
  // Auth Apps: /auth/v1/apps/{app_id}/webhooks/... (shared and legacy routes).
  webhookScopes: (auth) => [{ prefix: "/auth/v1/apps/:app_id", resolve: appWebhookScope(auth), legacyRoutes: "unlisted", params: { app_id: Uuid("The App's id") } }],
  routes: (auth) => authRoutes(auth),
  // Other services invite to an App of their workspace (the waitlist's approvals).
  provides: { "auth.invites": (auth) => authInvites(auth) },
  jobs: (auth) => [{ name: "auth.purge", schedule: "0 23 * * * *", run: () => auth.purge() }],
  stop: async (auth) => {
    await auth.verification.idle();
    await auth.m2m.tokenLog.close();
  },
});
