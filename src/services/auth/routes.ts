/** Mounts every Auth route group under /auth. */
import { Elysia } from "elysia";
import type { AuthService } from "./service";
import { adminUsersRoutes } from "./routes/admin-users";
import { appRoutes } from "./routes/apps";
import { auditRoutes } from "./routes/audit";
import { identitiesRoutes } from "./routes/identities";
import { invitesRoutes } from "./routes/invites";
import { m2mRoutes } from "./routes/m2m";
import { meRoutes } from "./routes/me";
import { mfaRoutes } from "./routes/mfa";
import { oauthRoutes } from "./routes/oauth";
import { rbacRoutes } from "./routes/rbac";
import { sessionRoutes } from "./routes/session";
import { tenantsRoutes } from "./routes/tenants";
import { verificationRoutes } from "./routes/verification";
import { wellKnownRoutes } from "./routes/well-known";

export function authRoutes(auth: AuthService) {
  return new Elysia({ prefix: "/auth" })
    .use(appRoutes(auth))
    .use(m2mRoutes(auth))
    .use(wellKnownRoutes(auth))
    .use(sessionRoutes(auth))
    .use(mfaRoutes(auth))
    .use(meRoutes(auth))
    .use(oauthRoutes(auth))
    .use(identitiesRoutes(auth))
    .use(verificationRoutes(auth))
    .use(invitesRoutes(auth))
    .use(tenantsRoutes(auth))
    .use(rbacRoutes(auth))
    .use(adminUsersRoutes(auth))
    .use(auditRoutes(auth));
}
