/** The platform service as a module: workspaces, members, roles, API keys, audit (spec 1). */
import { MULTIPART_TYPE, OAUTH_FORM_TYPES } from "../../core/request-body";
import { defineService } from "../../kernel/module";
import { AVATAR_MAX_BYTES } from "./workspaces/workspaces";
import { platformRoutes } from "./routes";
import { Platform, PLATFORM_ACTIONS } from "./service";

export const platformModule = defineService({
  name: "platform",
  description: "Workspaces, members, roles, API keys and audit (always enabled)",
  prefix: "/platform",
  openapi: { title: "Bunker platform administration", description: "Workspaces, members, roles, service activation, API keys, personal access tokens and audit.", version: "v1.0.0" },
  bodyRoutes: [
    // Multipart adds a boundary and part headers around the 2 MB image; the service checks the file itself.
    { method: "POST", path: "/platform/v1/workspaces/:workspace_slug/avatar", types: [MULTIPART_TYPE], maxBytes: AVATAR_MAX_BYTES + 64 * 1024 },
    // OIDC response_mode=form_post.
    { method: "POST", path: "/platform/v1/auth/oauth/:provider/callback", types: OAUTH_FORM_TYPES },
  ],
  actions: Object.values(PLATFORM_ACTIONS).flat(),
  create: (d) => new Platform(d),
  routes: (platform) => platformRoutes(platform),
  jobs: (platform) => [
    {
      name: "platform.oauth.purge",
      schedule: "0 43 * * * *",
      run: async () => {
        await platform.oauth.purge();
      },
    },
  ],
  stop: (platform) => platform.accounts.idle(),
});
