-- Workspaces, roles, memberships, invitations and enabled services.
CREATE TABLE platform_workspaces (
  id            TEXT PRIMARY KEY,
  slug          TEXT NOT NULL UNIQUE,
  display_name  TEXT NOT NULL,
  created_by    TEXT NOT NULL,
  status        TEXT NOT NULL DEFAULT 'active',
  settings      TEXT NOT NULL DEFAULT '{}',
  avatar_key    TEXT,
  avatar_type   TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

-- Built-in roles have workspace_id NULL and fixed ids; custom roles belong to one workspace.
CREATE TABLE platform_roles (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  description   TEXT NOT NULL DEFAULT '',
  policy        TEXT NOT NULL,
  builtin       INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX platform_roles_name ON platform_roles(COALESCE(workspace_id, ''), name);

CREATE TABLE platform_members (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  account_id    TEXT NOT NULL REFERENCES platform_accounts(id) ON DELETE CASCADE,
  role_id       TEXT NOT NULL REFERENCES platform_roles(id),
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  UNIQUE (workspace_id, account_id)
);
-- "My workspaces", in workspace-id order (keyset pages).
CREATE INDEX platform_members_account ON platform_members(account_id, workspace_id);

CREATE TABLE platform_invitations (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  email         TEXT NOT NULL COLLATE NOCASE,
  role_id       TEXT NOT NULL REFERENCES platform_roles(id),
  token_hash    TEXT NOT NULL UNIQUE,
  invited_by    TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  expires_at    INTEGER NOT NULL,
  accepted_at   TEXT,
  revoked_at    TEXT
);
CREATE INDEX platform_invitations_ws ON platform_invitations(workspace_id, created_at);

CREATE TABLE platform_workspace_services (
  workspace_id  TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  service       TEXT NOT NULL,
  enabled_at    TEXT NOT NULL,
  PRIMARY KEY (workspace_id, service)
);

-- Built-in roles. Owner may do everything; admin everything but deleting the workspace
-- and managing owners (enforced in the member service); member reads. Services add
-- their read actions to the member role in their own migrations.
INSERT INTO platform_roles (id, workspace_id, name, description, policy, builtin, created_at, updated_at) VALUES
 ('00000000-0000-7000-8000-000000000001', NULL, 'owner', 'Full control of the workspace',
  '[{"effect":"allow","actions":["*"],"resources":["*"]}]', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
 ('00000000-0000-7000-8000-000000000002', NULL, 'admin', 'Everything except deleting the workspace',
  '[{"effect":"allow","actions":["workspace.read","workspace.update","member.*","role.*","service.*","apikey.*","audit.*","auth.*","webhooks.*","mail.*","tack.*","waitlist.*","trawl.*","social.*"],"resources":["*"]}]', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
 ('00000000-0000-7000-8000-000000000003', NULL, 'member', 'Read access to the workspace and its services',
  '[{"effect":"allow","actions":["workspace.read","member.list","role.list","role.read","service.list","mail.webhooks.read","waitlist.webhooks.read","trawl.webhooks.read"],"resources":["*"]}]', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
