/**
 * The Auth service object: builds its parts once per app instance and exposes them to the
 * routes (and, later, to other services: the waitlist creates invites through it).
 */
import { AppAccess } from "./apps/access";
import { AppService } from "./apps/service";
import { SigningKeys } from "./apps/keys";
import { MfaService } from "./identity/mfa";
import { SessionService } from "./identity/sessions";
import { SigninService } from "./identity/signin";
import { UserService } from "./identity/users";
import { VerificationService } from "./identity/verification";
import { TenantService } from "./identity/tenants";
import { RbacService } from "./identity/rbac";
import { M2mService } from "./m2m/service";
import { InviteService } from "./identity/invites";
import { AuditQueryService } from "./audit-log/service";
import { AdminUserService } from "./identity/admin-users";
import { MeService } from "./identity/me";
import { IdentityService } from "./identity/identities";
import { AuthOAuth } from "./identity/oauth";
import { purgeExpiredSessions, roleByName } from "./identity";
import { clientByClientId } from "./m2m";
import { DAY } from "../../core/clock";
import type { AuthContext } from "./events";

/** Expired sessions (and their refresh tokens) are kept this long for the audit trail, then purged. */
export const SESSION_RETENTION_MS = 30 * DAY;

export class AuthService {
  readonly keys: SigningKeys;
  readonly apps: AppService;
  readonly access: AppAccess;
  readonly users: UserService;
  readonly sessions: SessionService;
  readonly signin: SigninService;
  readonly mfa: MfaService;
  readonly verification: VerificationService;
  readonly tenants: TenantService;
  readonly rbac: RbacService;
  readonly m2m: M2mService;
  readonly invites: InviteService;
  readonly auditLog: AuditQueryService;
  readonly adminUsers: AdminUserService;
  readonly me: MeService;
  readonly identities: IdentityService;
  readonly oauth: AuthOAuth;

  constructor(readonly m: AuthContext) {
    const { ctx, tenancy, emit } = m;
    this.keys = new SigningKeys(ctx);
    this.apps = new AppService(
      m,
      this.keys,
      (t, app, principal, meta) => m.webhooks.api.endpoints.removeScope(t, { product: m.name, scopeId: app.id, workspaceId: app.workspaceId }, { principal, meta }),
      async (appId, name) => !!(await roleByName(ctx.db, appId, name)),
    );
    this.access = new AppAccess(this.apps, this.keys, tenancy.authz, (appId, clientId) => clientByClientId(ctx.db, appId, clientId));
    this.users = new UserService(ctx, emit);
    this.sessions = new SessionService(ctx, this.keys);
    this.verification = new VerificationService(ctx, this, emit);
    this.mfa = new MfaService(ctx, this);
    this.signin = new SigninService(ctx, this.apps, this.users, this.sessions, tenancy.authz, emit, { mfa: this.mfa, signup: this.verification });
    this.tenants = new TenantService(ctx, this, emit);
    this.rbac = new RbacService(ctx, this, emit);
    this.m2m = new M2mService(ctx, this);
    this.invites = new InviteService(ctx, this, emit);
    this.auditLog = new AuditQueryService(ctx, this);
    this.adminUsers = new AdminUserService(ctx, this, emit);
    this.me = new MeService(ctx, this, emit);
    this.identities = new IdentityService(ctx, this);
    this.oauth = new AuthOAuth(ctx, this);
  }

  /** Retention purge (the auth.purge job): retired signing keys, expired sessions, OAuth state. */
  async purge(): Promise<void> {
    await this.keys.purge();
    await purgeExpiredSessions(this.m.ctx.db, this.m.ctx.clock.nowMs() - SESSION_RETENTION_MS);
    await this.oauth.purge();
  }
}
