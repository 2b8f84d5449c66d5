/**
 * Service activation per workspace. Every service but the platform itself (its module's
 * name, m.name) can be switched on and off; other services check it through
 * Authz.requireService on each request, so a change takes effect on the next call (no cache
 * to invalidate).
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { badRequest, notFound } from "../../../core/errors";
import type { ModuleContext } from "../../../kernel/module";
import { audit, type RequestMeta, type Authz } from "../../../kernel/tenancy";
import * as store from "./store/workspaces";

export class WorkspaceServiceActivation {
  constructor(
    private readonly m: ModuleContext,
    private readonly authz: Authz,
  ) {}

  async list(p: Principal, slug: string) {
    const { workspace } = await this.authz.authorizeWorkspace(this.m.ctx.db, p, { slug }, "service.list");
    return { data: await this.items(this.m.ctx.db, workspace) };
  }

  enable(p: Principal, slug: string, service: string, meta: RequestMeta) {
    return this.set(p, slug, service, true, meta);
  }

  disable(p: Principal, slug: string, service: string, meta: RequestMeta) {
    return this.set(p, slug, service, false, meta);
  }

  private set(p: Principal, slug: string, service: string, enabled: boolean, meta: RequestMeta) {
    return tx(this.m.ctx.db, async (t) => {
      const { workspace: ws } = await this.authz.authorizeWorkspace(t, p, { slug }, "service.update");
      if (!this.m.ctx.services.all.some((s) => s.name === service)) throw notFound("Service");
      if (service === this.m.name) {
        if (!enabled) throw badRequest("The platform service cannot be disabled", [{ field: "service", reason: "platform is always enabled" }], "SERVICE_REQUIRED");
      } else if ((await store.isServiceEnabled(t, ws.id, service)) !== enabled) {
        // Only real changes are mutations: repeating a PUT or DELETE leaves no audit noise.
        if (enabled) await store.enableService(t, ws.id, service, this.m.ctx.clock.iso());
        else await store.disableService(t, ws.id, service);
        await audit(t, this.m.ctx, { actor: p, action: enabled ? "service.enable" : "service.disable", workspaceId: ws.id, target: { type: "service", id: service }, meta });
      }
      return (await this.items(t, ws)).find((i) => i.service === service)!;
    });
  }

  private async items(db: Sql, ws: store.WorkspaceRow) {
    const on = new Map((await store.serviceActivations(db, ws.id)).map((r) => [r.service, r.enabled_at]));
    return this.m.ctx.services.all.map(({ name: service, description }) => {
      // The platform is on from the workspace's first moment, whatever DEFAULT_SERVICES said.
      const enabled_at = on.get(service) ?? (service === this.m.name ? ws.created_at : null);
      return { service, enabled: enabled_at !== null, enabled_at, description };
    });
  }
}
