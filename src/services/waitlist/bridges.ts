/**
 * What the waitlist uses of the services mounted before it, through their exported service
 * functions only (never their tables): mail domains, templates and sending; Auth Apps and
 * invites. A service that is not mounted answers as absent (settings that name it are 400).
 */
import type { Sql } from "../../core/db";
import { ApiError } from "../../core/errors";
import type { LoadedApp } from "../auth/apps";
import type { AuthService } from "../auth/service";
import { sendRenderer } from "../mail/content/part";
import type { DomainService } from "../mail/domains/part";
import type { MailParts } from "../mail/part";
import type { SendService } from "../mail/sending/part";
import type { ServiceDeps } from "../../kernel/module";

export interface Bridges {
  /** A mail domain of the workspace (null when absent or another workspace's). */
  domain(db: Sql, workspaceId: string, id: string): Promise<{ id: string; fqdn: string; status: string; intent: string } | null>;
  /** True when the workspace has a sendable template of that name. */
  templateExists(db: Sql, workspaceId: string, name: string): Promise<boolean>;
  /** Queues one templated mail (the mail service's checks apply). */
  send(workspaceId: string, template: string, body: { from: string; to: string; data: Record<string, unknown> }): Promise<{ message_id: string }>;
  /** An Auth App by slug when it belongs to the workspace. */
  app(workspaceId: string, slug: string): Promise<LoadedApp | null>;
  /** Creates a single-use invite for the address; the code is in this answer only. */
  invite(app: LoadedApp, email: string): Promise<{ id: string; code: string }>;
  /** Registers the check that refuses deleting a mail domain the waitlist settings use. */
  onDomainDelete(check: (t: Sql, domain: { id: string }) => Promise<string | null>): void;
  mail: boolean;
  auth: boolean;
}

export function bridges(d: ServiceDeps): Bridges {
  const mail = d.service<MailParts>("mail");
  const auth = d.service<AuthService>("auth");
  const domains = mail?.domains as DomainService | undefined;
  const sending = mail?.sending as SendService | undefined;
  return {
    mail: !!mail,
    auth: !!auth,
    async domain(db, workspaceId, id) {
      return (await domains?.domainById(db, workspaceId, id)) ?? null;
    },
    async templateExists(db, workspaceId, name) {
      if (!mail) return false;
      try {
        await sendRenderer(db, workspaceId, name);
        return true;
      } catch (e) {
        if (e instanceof ApiError && (e.status === 404 || e.status === 400)) return false;
        throw e;
      }
    },
    async send(workspaceId, template, body) {
      if (!sending) throw new ApiError(503, "MAIL_UNAVAILABLE", "The mail service is not mounted");
      return sending.sendForService(workspaceId, template, body);
    },
    async app(workspaceId, slug) {
      if (!auth) return null;
      try {
        const app = await auth.apps.bySlug(slug);
        return app.workspaceId === workspaceId ? app : null;
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
    async invite(app, email) {
      if (!auth) throw new ApiError(503, "AUTH_UNAVAILABLE", "The Auth service is not mounted");
      const r = await auth.invites.create(app, { type: "system", id: null }, { email, max_uses: 1 }, null);
      return { id: r.id, code: r.code };
    },
    onDomainDelete(check) {
      domains?.registerInUseCheck(check);
    },
  };
}
