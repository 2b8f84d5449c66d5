/**
 * What the waitlist uses of other services, through the ports they declare (never their
 * tables): mail.sending (mail domains, templates and sending) and auth.invites (Auth Apps and
 * invites). Looked up at each call; a service that is not mounted answers as absent
 * (settings that name it are 400, a send or an invite is 503).
 */
import { ApiError } from "../../core/errors";
import type { LoadedApp } from "../auth/ports";
import type { MailSending } from "../mail/ports";
import type { ServiceDeps } from "../../kernel/module";

export interface Bridges {
  /** A mail domain of the workspace (null when absent or another workspace's). */
  domain: MailSending["domain"];
  /** True when the workspace has a sendable template of that name. */
  templateExists: MailSending["templateExists"];
  /** Queues one templated mail (the mail service's checks apply). */
  send: MailSending["send"];
  /** An Auth App by slug when it belongs to the workspace. */
  app(workspaceId: string, slug: string): Promise<LoadedApp | null>;
  /** Creates a single-use invite for the address; the code is in this answer only. */
  invite(app: LoadedApp, email: string): Promise<{ id: string; code: string }>;
}

export function bridges(d: ServiceDeps): Bridges {
  const mail = () => d.port("mail.sending");
  const auth = () => d.port("auth.invites");
  return {
    async domain(db, workspaceId, id) {
      return (await mail()?.domain(db, workspaceId, id)) ?? null;
    },
    async templateExists(db, workspaceId, name) {
      return (await mail()?.templateExists(db, workspaceId, name)) ?? false;
    },
    async send(workspaceId, template, body) {
      const m = mail();
      if (!m) throw new ApiError(503, "MAIL_UNAVAILABLE", "The mail service is not mounted");
      return m.send(workspaceId, template, body);
    },
    async app(workspaceId, slug) {
      return (await auth()?.app(workspaceId, slug)) ?? null;
    },
    async invite(app, email) {
      const a = auth();
      if (!a) throw new ApiError(503, "AUTH_UNAVAILABLE", "The Auth service is not mounted");
      return a.invite(app, email);
    },
  };
}
