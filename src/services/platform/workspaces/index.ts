/**
 * What the other platform features use of workspaces: the services (by type, for the
 * facade's wiring), and the rows they read or write inside their own transaction (accepting
 * an invitation adds the member; introspection lists the caller's workspaces).
 */
export type { RoleService } from "./roles";
export type { WorkspaceService } from "./workspaces";
export { isMemberByEmail, memberOfAccount } from "./store/members";
export { BUILTIN_ROLE_IDS, enabledServices, insertMember, workspaceById, workspacesOfAccount } from "./store/workspaces";
