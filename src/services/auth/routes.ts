/** Mounts every Auth route group under /auth. */
import { Elysia } from "elysia";
import type { AuthService } from "./service";
import { adminUsersRoutes } from "./identity/routes/admin-users";
import { appRoutes } from "./apps/routes";
import { auditRoutes } from "./audit-log/routes";
import { identitiesRoutes } from "./identity/routes/identities";
import { invitesRoutes } from "./identity/routes/invites";
import { m2mRoutes } from "./m2m/routes";
import { meRoutes } from "./identity/routes/me";
import { mfaRoutes } from "./identity/routes/mfa";
import { oauthRoutes } from "./identity/routes/oauth";
import { rbacRoutes } from "./identity/routes/rbac";
import { sessionRoutes } from "./identity/routes/session";
import { tenantsRoutes } from "./identity/routes/tenants";
import { verificationRoutes } from "./identity/routes/verification";
import { wellKnownRoutes } from "./apps/well-known";

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
