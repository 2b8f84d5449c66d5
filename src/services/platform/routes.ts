/** Mounts every platform route group under /platform. */
import { Elysia } from "elysia";
import type { Platform } from "./service";
import { adminRoutes } from "./identity/routes/admin";
import { apiKeyRoutes } from "./keys/routes/apikeys";
import { auditRoutes } from "./audit/routes";
import { authRoutes } from "./identity/routes/auth";
import { invitationRoutes } from "./identity/routes/invitations";
import { introspectRoutes } from "./introspect/routes";
import { memberRoutes } from "./workspaces/routes/members";
import { mfaRoutes } from "./identity/routes/mfa";
import { oauthRoutes } from "./identity/routes/oauth";
import { personalTokenRoutes } from "./keys/routes/personal-tokens";
import { roleRoutes } from "./workspaces/routes/roles";
import { workspaceServiceRoutes } from "./workspaces/routes/workspace-services";
import { workspaceRoutes } from "./workspaces/routes/workspaces";

export function platformRoutes(platform: Platform) {
  return new Elysia({ prefix: "/platform" })
    .use(authRoutes(platform))
    .use(oauthRoutes(platform))
    .use(mfaRoutes(platform))
    .use(introspectRoutes(platform))
    .use(workspaceRoutes(platform))
    .use(apiKeyRoutes(platform))
    .use(personalTokenRoutes(platform))
    .use(auditRoutes(platform))
    .use(memberRoutes(platform))
    .use(invitationRoutes(platform))
    .use(roleRoutes(platform))
    .use(workspaceServiceRoutes(platform))
    .use(adminRoutes(platform));
}
