/**
 * End users of an App: creation (shared by sign-up, accept-invite, admin create and inline
 * tenant membership), the public view, and profile changes.
 *
 * - Username: 3-64 letters, digits, dot, underscore or hyphen, unique per App regardless of
 *   case. When a flow does not get one (invites, inline tenant members) it is derived from
 *   the email's local part, with a random suffix on collision.
 * - Email: unique per App regardless of case; kept as the user's primary email contact.
 *   Only a verified primary email signs in.
 * - Duplicates answer 409 EMAIL_TAKEN / USERNAME_TAKEN.
 */
import { randomBytes } from "node:crypto";
import { tx, type Sql } from "../../../core/db";
import { badRequest, conflict, type ErrorDetail } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import type { AppContext } from "../../../context";
import { passwordProblem } from "../../../kernel/identity";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit, type AuthActor } from "../audit/record";
import type { RequestMeta } from "../../../access/http";
import { isEmail } from "../apps/settings";
import { roleByName } from "./store/roles";
import * as store from "./store/users";
import type { EventEmitter } from "../../../kernel/webhooks";
import type { AUTH_WEBHOOKS } from "../events";

export const USERNAME_RE = /^[A-Za-z0-9._-]{3,64}$/;
export const DISPLAY_NAME_MAX = 200;
export const METADATA_MAX_BYTES = 16 * 1024;

export interface NewUser {
  username?: string | null;
  /** null only with `emailOptional` (a federated user whose address is absent or taken). */
  email: string | null;
  password?: string | null;
  display_name?: string | null;
  /** Checked by validate(): a JSON object of at most 16 KiB. */
  metadata?: unknown;
  /** Role name; the App's default_role when absent. */
  role?: string | null;
  email_verified?: boolean;
}

export interface PublicUser {
  id: string;
  app_id: string;
  username: string;
  email: string | null;
  email_verified: boolean;
  display_name: string | null;
  role: string | null;
  status: store.UserStatus;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export function publicUser(u: store.UserView): PublicUser {
  return {
    id: u.id,
    app_id: u.app_id,
    username: u.username,
    email: u.email,
    email_verified: !!u.email_verified_at,
    display_name: u.display_name,
    role: u.role_name,
    status: u.status,
    metadata: JSON.parse(u.metadata),
    created_at: u.created_at,
    updated_at: u.updated_at,
  };
}

/** Emits an Auth webhook event inside the caller's transaction (`t`: that transaction's handle). */
export type EmitAuthEvent = EventEmitter<typeof AUTH_WEBHOOKS>;

/** The App's password policy (kernel/identity/passwords.ts); every path that sets a password (sign-up, invite, change, reset, admin) goes through it. */
export function checkPassword(app: LoadedApp, password: string, field = "password"): ErrorDetail | null {
  return passwordProblem(password, { minLength: app.settings.password_min_length, blockCommon: app.settings.block_common_passwords }, field);
}

export function checkMetadata(v: unknown, field = "metadata"): ErrorDetail | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) return { field, reason: "must be a JSON object" };
  if (JSON.stringify(v).length > METADATA_MAX_BYTES) return { field, reason: `at most ${METADATA_MAX_BYTES} bytes of JSON` };
  return null;
}

export class UserService {
  constructor(
    private readonly ctx: AppContext,
    private readonly emit: EmitAuthEvent,
  ) {}

  /** A username derived from an email's local part, made unique in the App. */
  async deriveUsername(db: Sql, app: LoadedApp, email: string): Promise<string> {
    let base = email.split("@")[0].replace(/[^A-Za-z0-9._-]/g, "").slice(0, 48);
    if (base.length < 3) base = (base + "user").slice(0, 8);
    if (!(await store.usernameTaken(db, app.id, base))) return base;
    for (;;) {
      const candidate = `${base}-${randomBytes(3).toString("hex")}`;
      if (!(await store.usernameTaken(db, app.id, candidate))) return candidate;
    }
  }

  /** 400 with every bad field; `db`: the handle of the caller's transaction, or ctx.db. */
  async validate(db: Sql, app: LoadedApp, u: NewUser, opts: { passwordRequired: boolean; emailOptional?: boolean }): Promise<{ email: string | null; roleId: string | null }> {
    const details: ErrorDetail[] = [];
    const email = typeof u.email === "string" ? u.email.trim().toLowerCase() : "";
    if (!(opts.emailOptional && u.email === null) && !isEmail(email)) details.push({ field: "email", reason: "must be a valid email address" });
    if (u.username != null && !USERNAME_RE.test(u.username)) details.push({ field: "username", reason: "3-64 letters, digits, dot, underscore or hyphen" });
    if (u.password != null) {
      const d = checkPassword(app, u.password);
      if (d) details.push(d);
    } else if (opts.passwordRequired) details.push({ field: "password", reason: "is required" });
    if (u.display_name != null && (typeof u.display_name !== "string" || u.display_name.length > DISPLAY_NAME_MAX)) {
      details.push({ field: "display_name", reason: `at most ${DISPLAY_NAME_MAX} characters` });
    }
    const m = checkMetadata(u.metadata);
    if (m) details.push(m);
    const roleName = u.role ?? app.settings.default_role;
    const role = roleName ? await roleByName(db, app.id, roleName) : null;
    if (u.role != null && !role) details.push({ field: "role", reason: "no such role in this App" });
    if (details.length) throw badRequest("User validation failed", details);
    return { email: u.email === null ? null : email, roleId: role?.id ?? null };
  }

  /**
   * Creates a user inside the caller's transaction (`db` is its handle; with ctx.db, in its
   * own). Hash the password first with hashPassword(): argon2 must not run while the write
   * lock is held.
   */
  insert(db: Sql, app: LoadedApp, u: NewUser, passwordHash: string | null, actor: AuthActor, meta: RequestMeta | null, method: string, opts: { emailOptional?: boolean; usernameBase?: string } = {}): Promise<store.UserView> {
    return tx(db, async (t) => {
      const { email, roleId } = await this.validate(t, app, u, { passwordRequired: false, emailOptional: opts.emailOptional });
      const username = u.username ?? (await this.deriveUsername(t, app, email ?? opts.usernameBase ?? "user"));
      const taken = await store.emailOrUsernameTaken(t, app.id, email, username);
      if (taken.email) throw conflict("A user with this email already exists", "EMAIL_TAKEN");
      if (taken.username) throw conflict("This username is taken", "USERNAME_TAKEN");
      const now = this.ctx.clock.iso();
      const id = uuid();
      await store.insertUser(t, {
        id,
        app_id: app.id,
        username,
        display_name: u.display_name ?? null,
        password_hash: passwordHash,
        role_id: roleId,
        status: "active",
        metadata: JSON.stringify(u.metadata ?? {}),
        created_at: now,
        updated_at: now,
      });
      if (email !== null) {
        await store.insertContact(t, {
          id: uuid(),
          app_id: app.id,
          user_id: id,
          kind: "email",
          value: email,
          is_primary: 1,
          verified_at: u.email_verified ? now : null,
          created_at: now,
        });
      }
      const view = (await store.userView(t, app.id, id))!;
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.create", actor: actor.type === "anonymous" ? { type: "user", id } : actor, target: { type: "user", id }, meta, metadata: { method } });
      await this.emit(t, app.id, "user.created", { ...publicUser(view), signup_method: method });
      return view;
    });
  }

  /** Validates, hashes and inserts; `beforeHash` runs once the body is valid (a sign-up's rate limits). */
  async create(app: LoadedApp, u: NewUser, actor: AuthActor, meta: RequestMeta | null, method: string, opts: { passwordRequired: boolean; beforeHash?: () => Promise<void> }) {
    await this.validate(this.ctx.db, app, u, opts);
    await opts.beforeHash?.();
    const hash = u.password != null ? await this.ctx.passwords.hash(u.password) : null;
    return this.insert(this.ctx.db, app, u, hash, actor, meta, method);
  }

  /** A user of the App (outside a transaction), or null. */
  get(app: LoadedApp, id: string): Promise<store.UserView | null> {
    return store.userView(this.ctx.db, app.id, id);
  }
}
