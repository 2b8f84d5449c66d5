-- Lookups of the member, invitation and role services (tables are in 0011).

-- Members and custom roles are paged by id (UUIDv7: creation order) within a workspace.
CREATE INDEX platform_members_ws ON platform_members(workspace_id, id);
CREATE INDEX platform_roles_ws ON platform_roles(workspace_id, id);

-- "Is this role in use?" before deleting it.
CREATE INDEX platform_members_role ON platform_members(role_id);
CREATE INDEX platform_invitations_role ON platform_invitations(role_id);

-- At most one open invitation per email and workspace: re-inviting revokes the old one
-- first, so two concurrent invites of one address cannot both leave a live token behind.
-- The column is NOCASE, so Bob@x and bob@x are the same address here.
CREATE UNIQUE INDEX platform_invitations_open ON platform_invitations(workspace_id, email)
  WHERE accepted_at IS NULL AND revoked_at IS NULL;
