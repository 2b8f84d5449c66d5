/** A workspace, a member and a role as the API shows them: typed by their schemas (workspaces/schemas.ts). */
import type { Static } from "@sinclair/typebox";
import type { Member, Role, Workspace } from "./schemas";
import type { MemberRow } from "./store/members";
import type { RoleRow } from "./store/roles";
import type { WorkspaceRow } from "./store/workspaces";

/** The avatar's URL depends on the instance's public URL: the service hands it in (WorkspaceService.avatarUrl). */
export const workspaceView = (w: WorkspaceRow, avatarUrl: string | null): Static<typeof Workspace> => ({
  id: w.id,
  slug: w.slug,
  display_name: w.display_name,
  created_by: w.created_by,
  status: w.status,
  settings: JSON.parse(w.settings),
  avatar_url: avatarUrl,
  created_at: w.created_at,
  updated_at: w.updated_at,
});

export const memberView = (m: MemberRow): Static<typeof Member> => ({
  id: m.id,
  account_id: m.account_id,
  email: m.email,
  username: m.username,
  display_name: m.display_name,
  role_id: m.role_id,
  role: m.role_name,
  joined_at: m.created_at,
});

export const roleView = (r: RoleRow): Static<typeof Role> => ({
  id: r.id,
  name: r.name,
  description: r.description,
  policy: JSON.parse(r.policy),
  builtin: !!r.builtin,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
