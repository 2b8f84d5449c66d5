/** Mounts every platform route group under /platform. */
import { Elysia } from "elysia";
import type { Platform } from "./service";
import { adminRoutes } from "./routes/admin";
import { apiKeyRoutes } from "./routes/apikeys";
import { auditRoutes } from "./routes/audit";
import { authRoutes } from "./routes/auth";
import { introspectRoutes } from "./routes/introspect";
import { memberRoutes } from "./routes/members";
import { mfaRoutes } from "./routes/mfa";
import { oauthRoutes } from "./routes/oauth";
import { personalTokenRoutes } from "./routes/personal-tokens";
import { roleRoutes } from "./routes/roles";
import { workspaceServiceRoutes } from "./routes/workspace-services";
import { workspaceRoutes } from "./routes/workspaces";

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
    .use(roleRoutes(platform))
    .use(workspaceServiceRoutes(platform))
    .use(adminRoutes(platform));
}
