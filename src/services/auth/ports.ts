/**
 * Auth's port (ServiceModule.provides, ModuleContext.ports): what other services use of Auth,
 * an App of their workspace by slug and single-use invites to it (the waitlist's approvals).
 */
import { ApiError } from "../../core/errors";
import type { AuthService } from "./service";

/** An Auth App as its service loads it (what an invite is made for). */
export type LoadedApp = Awaited<ReturnType<AuthService["apps"]["bySlug"]>>;

/** What another service may use of Auth: Apps and their invites, without a caller principal. */
export interface AuthInvites {
  /** An Auth App by slug when it belongs to the workspace (null otherwise). */
  app(workspaceId: string, slug: string): Promise<LoadedApp | null>;
  /** Creates a single-use invite for the address, by the system; the code is in this answer only. */
  invite(app: LoadedApp, email: string): Promise<{ id: string; code: string }>;
}

declare module "../../kernel/module" {
  interface Ports {
    "auth.invites": AuthInvites;
  }
}

/** The auth.invites port over the Auth service. */
export function authInvites(auth: AuthService): AuthInvites {
  return {
    async app(workspaceId, slug) {
      try {
        const app = await auth.apps.bySlug(slug);
        return app.workspaceId === workspaceId ? app : null;
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
    async invite(app, email) {
      const r = await auth.invites.create(app, { type: "system", id: null }, { email, max_uses: 1 }, null);
      return { id: r.id, code: r.code };
    },
  };
}
