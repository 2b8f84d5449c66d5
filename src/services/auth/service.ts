/**
 * The Auth service object: builds its parts once per app instance and exposes them to the
 * routes (and, later, to other services: the waitlist creates invites through it).
 */
import type { AppContext } from "../../context";
import type { Platform } from "../platform/service";
import type { WebhookEngine } from "../webhooks/engine";
import type { WebhookService } from "../webhooks/service";
import { AppAccess } from "./access";
import { AppService } from "./apps";
import { SigningKeys } from "./keys";
import { MfaService } from "./mfa";
import { SessionService } from "./sessions";
import { SigninService } from "./signin";
import { UserService } from "./users";
import { VerificationService } from "./verification";
import { TenantService } from "./tenants";
import { RbacService } from "./rbac";
import { M2mService } from "./m2m";
import { InviteService } from "./invites";
import { AuditQueryService } from "./audit-log";
import { AdminUserService } from "./admin-users";
import { MeService } from "./me";
import { IdentityService } from "./identities";
import { AuthOAuth } from "./oauth";
import { purgeExpiredSessions } from "./store/users";
import { clientByClientId } from "./store/m2m";
import { DAY } from "../../core/clock";

export const AUTH_ACTIONS = [
  { name: "auth.app.list", description: "List the workspace's Auth Apps" },
  { name: "auth.app.read", description: "Read an App and its settings" },
  { name: "auth.app.create", description: "Create an App" },
  { name: "auth.app.update", description: "Change an App's settings, rotate its signing or publishable key" },
  { name: "auth.app.delete", description: "Delete an App and everything in it" },
  { name: "auth.user.list", description: "List an App's users" },
  { name: "auth.user.read", description: "Read an App user" },
  { name: "auth.user.create", description: "Create App users (also: sign-up with a workspace API key)" },
  { name: "auth.user.update", description: "Change App users (profile, status, role)" },
  { name: "auth.user.delete", description: "Delete App users" },
  { name: "auth.tenant.read", description: "List and read tenants and their members" },
  { name: "auth.tenant.create", description: "Create tenants" },
  { name: "auth.tenant.update", description: "Change tenants" },
  { name: "auth.tenant.delete", description: "Delete tenants (memberships go with them)" },
  { name: "auth.tenant.members.add", description: "Add users to tenants (existing or created inline)" },
  { name: "auth.tenant.members.remove", description: "Remove users from tenants" },
  { name: "auth.role.read", description: "List and read roles and permissions" },
  { name: "auth.role.create", description: "Create roles and permissions" },
  { name: "auth.role.update", description: "Change roles and permissions" },
  { name: "auth.role.delete", description: "Delete roles and permissions" },
  { name: "auth.invite.list", description: "List invites" },
  { name: "auth.invite.create", description: "Create invites" },
  { name: "auth.invite.delete", description: "Revoke invites" },
  { name: "auth.verification.create", description: "Mint and send contact verification codes" },
  { name: "auth.m2m.list", description: "List M2M clients" },
  { name: "auth.m2m.create", description: "Create M2M clients" },
  { name: "auth.m2m.update", description: "Rotate M2M client secrets, change their permissions" },
  { name: "auth.m2m.delete", description: "Delete M2M clients" },
  { name: "auth.audit.list", description: "Read an App's audit log" },
];

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

  constructor(
    readonly ctx: AppContext,
    readonly platform: Platform,
    readonly webhooks: WebhookEngine,
    webhookApi: WebhookService,
  ) {
    ctx.actions.register("auth", AUTH_ACTIONS);
    const emit = (appId: string, type: string, data: unknown) => void webhooks.emit({ product: "auth", scopeId: appId }, type, data);
    this.keys = new SigningKeys(ctx);
    this.apps = new AppService(ctx, platform, this.keys, (app, principal, meta) =>
      webhookApi.endpoints.removeScope({ product: "auth", scopeId: app.id, workspaceId: app.workspaceId }, { principal, meta }),
    );
    this.access = new AppAccess(this.apps, this.keys, platform.authz, (appId, clientId) => clientByClientId(ctx.db, appId, clientId));
    this.users = new UserService(ctx, emit);
    this.sessions = new SessionService(ctx, this.keys);
    this.verification = new VerificationService(ctx, this, emit);
    this.mfa = new MfaService(ctx, this);
    this.signin = new SigninService(ctx, this.apps, this.users, this.sessions, platform.authz, emit, { mfa: this.mfa, signup: this.verification });
    this.tenants = new TenantService(ctx, this, emit);
    this.rbac = new RbacService(ctx, this, emit);
    this.m2m = new M2mService(ctx, this);
    this.invites = new InviteService(ctx, this, emit);
    this.auditLog = new AuditQueryService(ctx, this);
    this.adminUsers = new AdminUserService(ctx, this, emit);
    this.me = new MeService(ctx, this, emit);
    this.identities = new IdentityService(ctx, this);
    this.oauth = new AuthOAuth(ctx, this);
    ctx.scheduler.register({
      name: "auth.purge",
      schedule: "0 23 * * * *",
      run: () => {
        this.keys.purge();
        purgeExpiredSessions(ctx.db, ctx.clock.nowMs() - SESSION_RETENTION_MS);
        this.oauth.purge();
      },
    });
  }
}
