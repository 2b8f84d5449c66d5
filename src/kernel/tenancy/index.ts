/**
 * The tenancy room's one public face (kernel/tenancy): what products and the platform
 * module use to resolve a caller, authorize it in a workspace, read a workspace and write
 * the audit trail. Nothing outside this folder imports its other files.
 */
export { Tenancy, workspaceDisplayName, type WorkspaceDeleteHook } from "./tenancy";
export { API_KEY_PREFIX, PAT_PREFIX, Authz, assertAccountActive, type SessionResolver, type WorkspaceAccess } from "./authz";
export { PlatformReadCache } from "./read-cache";
export { audit, platformChanged, platformGeneration, type RequestMeta } from "./audit";
export {
  enabledServices,
  membership,
  workspaceById,
  workspaceBySlug,
  type ApiKeyAuthRow,
  type ApiKeyRow,
  type AuditRow,
  type MembershipRow,
  type PersonalTokenRow,
  type WorkspaceRow,
} from "./store";
