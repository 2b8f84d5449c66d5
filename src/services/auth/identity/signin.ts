/**
 * End-user sign-up and sign-in of an App.
 *
 * Sign-up's Authorization header (spec: required) carries either the App's publishable
 * key (pk_...) or a workspace API key of the App's workspace allowing auth.user.create.
 * With the App setting signup_requires_pak (pak = platform API key) only the latter is
 * accepted, so users can only be created from the customer's backend. signup_enabled=false
 * refuses both with 403 SIGNUP_DISABLED. Sign-ups with the publishable key are limited per
 * client address (all Apps together) and per App (kernel/identity/stranger-limits.ts): 429
 * RATE_LIMITED with Retry-After, after the body is judged and before the password is hashed.
 * Sign-ups with a workspace API key come from the customer's own backend and are not counted.
 *
 * Sign-in follows the platform's rules (shared SigninGuard): one 401 INVALID_CREDENTIALS for
 * every failure, argon2 work against a dummy hash for unknown identifiers, 5 attempts a
 * minute and a 15-minute lock after 4 failures per submitted identifier (counted per App),
 * and at most ADDRESS_LIMITS.signin failures per client address across identifiers (per App),
 * 403 ACCOUNT_SUSPENDED / ACCOUNT_DEACTIVATED only after the password is proven.
 * Identifiers: the username or the verified primary email; nothing else authenticates.
 * tenant_id (UUID or tnt_ display id): the user must be a member of that tenant (403
 * NOT_TENANT_MEMBER otherwise, also for an unknown tenant), and the tokens carry tid/trole.
 */
import type { RequestMeta } from "../../../access/http";
import { bearerFrom, type PrincipalResolver } from "../../../access/principal";
import { forbidden, invalidField, unauthorized } from "../../../core/errors";
import { SigninGuard } from "../../../core/signin-guard";
import { safeEqual } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import { provePassword, StrangerLimits, type PasswordRealm } from "../../../kernel/identity";
import { actorOfPrincipal, type AppService, type LoadedApp } from "../apps/service";
import { recordAuthAudit } from "../audit/record";
import type { ConsumerTokens, SessionService } from "./sessions";
import { membershipClaims, tenantByRef } from "./store/tenants";
import * as store from "./store/users";
import type { EmitAuthEvent, NewUser, UserService } from "./users";

/** What sign-in needs of the MFA module: a challenge when the user has an enabled factor. */
export interface MfaGate {
  challengeFor(app: LoadedApp, user: store.UserView, tenantId: string | null, meta: RequestMeta, firstAmr?: string[]): Promise<MfaChallengeResponse | null>;
}

export interface MfaChallengeResponse {
  mfa_required: true;
  mfa_token: string;
  factors: { id: string; type: string }[];
  [k: string]: unknown;
}

/** Called after sign-up when the App mails verification codes (verification module). */
export interface SignupHook {
  afterSignup(app: LoadedApp, user: store.UserView): Promise<void>;
}

export class SigninService {
  private guards = new Map<string, SigninGuard>();

  constructor(
    private readonly ctx: AppContext,
    private readonly apps: AppService,
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly platform: PrincipalResolver,
    private readonly emit: EmitAuthEvent,
    private readonly hooks: { mfa: MfaGate; signup: SignupHook },
  ) {}

  private guard(app: LoadedApp) {
    let g = this.guards.get(app.id);
    if (!g) this.guards.set(app.id, (g = new SigninGuard(this.ctx.ratelimit, () => this.ctx.clock.nowMs(), `auth:${app.id}:signin`)));
    return g;
  }

  /** 401 without a usable credential; 403 when the App refuses it (disabled sign-up, publishable key under signup_requires_pak). */
  private async authorizeSignup(app: LoadedApp, authorization: string | null | undefined) {
    const token = bearerFrom(authorization);
    if (!token) throw unauthorized("Sign-up needs the App's publishable key or a workspace API key in the Authorization header");
    if (token.startsWith("pk_")) {
      if (!safeEqual(token, app.publishableKey)) throw unauthorized("Unknown publishable key");
      if (!app.settings.signup_enabled) throw forbidden("Sign-up is disabled for this App", "SIGNUP_DISABLED");
      if (app.settings.signup_requires_pak) throw forbidden("This App only accepts sign-ups made with a workspace API key", "PLATFORM_API_KEY_REQUIRED");
      return { type: "anonymous" as const, id: null };
    }
    const principal = await this.platform.resolve(token, null);
    if (!principal || principal.kind !== "api_key") throw unauthorized("Sign-up needs the App's publishable key or a workspace API key");
    await this.apps.authorize(principal, app, "auth.user.create");
    if (!app.settings.signup_enabled) throw forbidden("Sign-up is disabled for this App", "SIGNUP_DISABLED");
    return actorOfPrincipal(principal);
  }

  async signup(app: LoadedApp, authorization: string | null | undefined, b: NewUser, meta: RequestMeta): Promise<ConsumerTokens> {
    const caller = await this.authorizeSignup(app, authorization);
    if (typeof b.username !== "string") throw invalidField("username", "is required");
    const limits = new StrangerLimits(this.ctx, `auth:${app.id}`);
    const beforeHash = caller.type === "anonymous" ? () => limits.admitSignup(meta.ip) : undefined;
    const user = await this.users.create(app, { username: b.username, email: b.email, password: b.password, display_name: b.display_name, metadata: b.metadata }, { type: "anonymous", id: null }, meta, "password", { passwordRequired: true, beforeHash });
    await this.hooks.signup.afterSignup(app, user);
    return this.sessions.start(app, user, { amr: ["pwd"] }, meta);
  }

  /** The App's users as the identity core's password realm. */
  private passwordRealm(app: LoadedApp): PasswordRealm<store.UserView> {
    return {
      guard: this.guard(app),
      byIdentifier: (db, id) => store.userByIdentifier(db, app.id, id),
      auditFailure: (user, meta) =>
        recordAuthAudit(this.ctx.db, this.ctx, app.id, { action: "user.signin", outcome: "failure", actor: { type: user ? "user" : "anonymous", id: user?.id ?? null }, meta, metadata: { reason: "invalid_credentials" } }),
    };
  }

  async signin(app: LoadedApp, b: { identifier: string; password: string; tenant_id?: string | null }, meta: RequestMeta): Promise<ConsumerTokens | MfaChallengeResponse> {
    const u = await provePassword(this.ctx, this.passwordRealm(app), b, meta);

    let tenantId: string | null = null;
    if (b.tenant_id != null && b.tenant_id !== "") {
      const tenant = await tenantByRef(this.ctx.db, app.id, b.tenant_id);
      if (!tenant || !(await membershipClaims(this.ctx.db, tenant.id, u.id))) throw forbidden("The user is not a member of this tenant", "NOT_TENANT_MEMBER");
      if (tenant.status !== "active") throw forbidden(`This tenant is ${tenant.status}`, "TENANT_NOT_ACTIVE");
      tenantId = tenant.id;
    }

    if (app.settings.mfa_policy !== "disabled") {
      const challenge = await this.hooks.mfa.challengeFor(app, u, tenantId, meta);
      if (challenge) {
        await recordAuthAudit(this.ctx.db, this.ctx, app.id, { action: "user.signin.mfa_required", actor: { type: "user", id: u.id }, meta });
        return challenge;
      }
    }
    return this.complete(app, u, { tenantId, amr: ["pwd"] }, meta, "password");
  }

  /** Finishes a sign-in (password, MFA, federated): session, audit, user.signed_in event. */
  async complete(app: LoadedApp, user: store.UserView, opts: { tenantId: string | null; amr: string[]; mfaAt?: string | null }, meta: RequestMeta, method: string) {
    // One transaction for the session, its audit entry and the event.
    const tokens = await this.sessions.start(app, user, opts, meta, async (t) => {
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.signin", actor: { type: "user", id: user.id }, meta, metadata: { method, amr: opts.amr, tenant_id: opts.tenantId } });
      await this.emit(t, app.id, "user.signed_in", {
        user_id: user.id,
        method,
        // A second factor was done (amr alone can't say: a federated amr has two entries).
        mfa: !!opts.mfaAt,
        tenant_id: opts.tenantId,
        ip: meta.ip,
        user_agent: meta.userAgent,
        signed_in_at: this.ctx.clock.iso(),
      });
    });
    return tokens;
  }
}
