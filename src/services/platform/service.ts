/**
 * The platform product's service object: console accounts and the management of
 * workspaces, members, roles, keys and the audit log, built once per app on the kernel's
 * tenancy (kernel/tenancy), which resolves and authorizes callers for every service.
 */
import type { AppContext } from "../../context";
import { AccountService } from "./identity/accounts";
import { ApiKeyService } from "./keys/apikeys";
import { AuditLogService } from "./audit/service";
import type { Authz } from "../../kernel/tenancy";
import type { ModuleContext } from "../../kernel/module";
import { IntrospectService } from "./introspect/service";
import { InvitationService } from "./identity/invitations";
import { MemberService } from "./workspaces/members";
import { PlatformMfa } from "./identity/mfa";
import { PlatformOAuth } from "./identity/oauth";
import { PersonalTokenService } from "./keys/personal-tokens";
import { RoleService } from "./workspaces/roles";
import { sessionPrincipals } from "./identity/session-principals";
import { SetupService } from "./identity/setup";
import { WorkspaceServiceActivation } from "./workspaces/workspace-services";
import { WorkspaceService } from "./workspaces/workspaces";

export const PLATFORM_ACTIONS = {
  workspace: [
    { name: "workspace.read", description: "Read the workspace" },
    { name: "workspace.update", description: "Rename, change settings or avatar" },
    { name: "workspace.delete", description: "Delete the workspace" },
  ],
  apikey: [
    { name: "apikey.list", description: "List the workspace's API keys (never the secret)" },
    { name: "apikey.read", description: "Read one API key's metadata and policy" },
    { name: "apikey.create", description: "Mint an API key (console session only; policy capped by the minter's)" },
    { name: "apikey.delete", description: "Revoke an API key (console session only)" },
  ],
  audit: [{ name: "audit.list", description: "Read the workspace's audit log" }],
  member: [
    { name: "member.list", description: "List members and pending invitations" },
    { name: "member.create", description: "Invite people by email (the role must be within your own policy)" },
    { name: "member.update", description: "Change a member's role (owner role: owners only)" },
    { name: "member.delete", description: "Remove members and revoke invitations (leaving needs no action)" },
  ],
  role: [
    { name: "role.list", description: "List built-in and custom roles" },
    { name: "role.read", description: "Read a role and its policy" },
    { name: "role.create", description: "Create a custom role (policy within your own)" },
    { name: "role.update", description: "Rename a custom role or change its policy" },
    { name: "role.delete", description: "Delete a custom role no member holds" },
  ],
  service: [
    { name: "service.list", description: "See which services the workspace has enabled" },
    { name: "service.update", description: "Enable or disable services for the workspace" },
  ],
} as const;

export class Platform {
  readonly accounts: AccountService;
  readonly authz: Authz;
  readonly workspaces: WorkspaceService;
  readonly introspect: IntrospectService;
  readonly setup: SetupService;
  readonly apiKeys: ApiKeyService;
  readonly personalTokens: PersonalTokenService;
  readonly auditLog: AuditLogService;
  readonly roles: RoleService;
  readonly members: MemberService;
  readonly invitations: InvitationService;
  readonly workspaceServices: WorkspaceServiceActivation;
  readonly oauth: PlatformOAuth;
  readonly mfa: PlatformMfa;

  readonly ctx: AppContext;

  /** Built by the platform module on its context and the kernel's tenancy, whose console sessions it resolves. */
  constructor(m: ModuleContext) {
    const { ctx, tenancy } = m;
    this.ctx = ctx;
    this.accounts = new AccountService(ctx);
    this.authz = tenancy.authz;
    tenancy.authz.acceptSessions(sessionPrincipals(ctx, this.accounts.tokens));
    this.workspaces = new WorkspaceService(ctx, tenancy);
    this.introspect = new IntrospectService(ctx, this.authz, this.workspaces);
    this.setup = new SetupService(ctx, this.accounts);
    this.apiKeys = new ApiKeyService(ctx, this.authz);
    this.personalTokens = new PersonalTokenService(ctx);
    this.auditLog = new AuditLogService(ctx, this.authz);
    this.roles = new RoleService(ctx, this.authz);
    this.members = new MemberService(ctx, this.authz, this.roles);
    this.invitations = new InvitationService(ctx, this.authz, this.roles);
    this.workspaceServices = new WorkspaceServiceActivation(m, this.authz);
    this.mfa = new PlatformMfa(ctx, this.accounts);
    this.accounts.mfa = this.mfa;
    this.oauth = new PlatformOAuth(ctx, this.accounts);
  }
}
