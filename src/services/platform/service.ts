/**
 * The platform service object: builds its parts once per app and exposes what other
 * services may use (principal resolution, workspace authorization, audit).
 */
import type { AppContext } from "../../context";
import { AccountService } from "./accounts";
import { Authz } from "./authz";
import { IntrospectService } from "./introspect";
import { SetupService } from "./setup";
import { WorkspaceService } from "./workspaces";

export const PLATFORM_ACTIONS = {
  workspace: [
    { name: "workspace.read", description: "Read the workspace" },
    { name: "workspace.update", description: "Rename, change settings or avatar" },
    { name: "workspace.delete", description: "Delete the workspace" },
  ],
} as const;

export class Platform {
  readonly accounts: AccountService;
  readonly authz: Authz;
  readonly workspaces: WorkspaceService;
  readonly introspect: IntrospectService;
  readonly setup: SetupService;

  constructor(readonly ctx: AppContext) {
    for (const [service, actions] of Object.entries(PLATFORM_ACTIONS)) ctx.actions.register(service, [...actions]);
    this.accounts = new AccountService(ctx);
    this.authz = new Authz(ctx, this.accounts.tokens);
    this.workspaces = new WorkspaceService(ctx, this.authz);
    this.introspect = new IntrospectService(ctx, this.authz, this.workspaces);
    this.setup = new SetupService(ctx, this.accounts);
  }
}
