-- Community service, first slice: communities (the admin lane's resource). Every later
-- social table (actors, posts, edges, ...) references social_communities(id) ON DELETE
-- CASCADE, so deleting a community removes everything in it.

CREATE TABLE social_communities (
  id            TEXT PRIMARY KEY,                 -- UUIDv7
  workspace_id  TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  slug          TEXT NOT NULL,                    -- 3-63 of [a-z0-9-], unique per workspace
  display_name  TEXT NOT NULL,
  name_fold     TEXT NOT NULL,                    -- display_name lower-cased (Unicode) for the q filter
  description   TEXT,
  app_id        TEXT,                             -- connected Auth App (at most one community per App)
  settings      TEXT NOT NULL,                    -- JSON object, see src/services/social/settings.ts
  status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended','archived')),
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  UNIQUE (workspace_id, slug)
);
-- Newest-first keyset pages of one workspace.
CREATE INDEX social_communities_workspace ON social_communities(workspace_id, created_at, id);
CREATE UNIQUE INDEX social_communities_app ON social_communities(app_id) WHERE app_id IS NOT NULL;
