-- Card board (tack): board workspaces (owned by a platform workspace), projects, lists,
-- labels, cards, card labels, comments and the activity log. Statements: the stores in
-- src/services/tack/board/. Names are slugs unique in their parent (archived ones too).
-- Positions of lists and of the active cards of a list are 0-based and contiguous; the
-- server keeps them so (archived cards leave the order).

CREATE TABLE tack_workspaces (
  id                  TEXT PRIMARY KEY,                -- ws_...
  owner_workspace_id  TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  name                TEXT NOT NULL,
  display_name        TEXT NOT NULL,
  metadata            TEXT NOT NULL,                   -- JSON object
  archived_at         TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  UNIQUE (owner_workspace_id, name)
);
CREATE INDEX tack_workspaces_owner ON tack_workspaces(owner_workspace_id, created_at, id);

CREATE TABLE tack_projects (
  id            TEXT PRIMARY KEY,                      -- proj_...
  workspace_id  TEXT NOT NULL REFERENCES tack_workspaces(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  display_name  TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('active','archived')),
  archived_at   TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  UNIQUE (workspace_id, name)
);
CREATE INDEX tack_projects_workspace ON tack_projects(workspace_id, created_at, id);

CREATE TABLE tack_lists (
  id            TEXT PRIMARY KEY,                      -- list_...
  project_id    TEXT NOT NULL REFERENCES tack_projects(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  display_name  TEXT NOT NULL,
  position      INTEGER NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  UNIQUE (project_id, name)
);
CREATE INDEX tack_lists_position ON tack_lists(project_id, position);

CREATE TABLE tack_labels (
  id            TEXT PRIMARY KEY,                      -- lbl_...
  workspace_id  TEXT NOT NULL REFERENCES tack_workspaces(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  color         TEXT NOT NULL,                         -- #rrggbb
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  UNIQUE (workspace_id, name)
);

CREATE TABLE tack_cards (
  id            TEXT PRIMARY KEY,                      -- card_...
  workspace_id  TEXT NOT NULL REFERENCES tack_workspaces(id) ON DELETE CASCADE,
  project_id    TEXT NOT NULL REFERENCES tack_projects(id) ON DELETE CASCADE,
  list_id       TEXT NOT NULL REFERENCES tack_lists(id) ON DELETE CASCADE,
  search_id     BIGINT NOT NULL,                       -- key of the card's full-text row (tack_cards_fts)
  title         TEXT NOT NULL,
  body          TEXT NOT NULL,
  priority      TEXT NOT NULL CHECK (priority IN ('urgent','high','medium','low','none')),
  position      INTEGER NOT NULL,
  assignees     TEXT NOT NULL,                         -- JSON array of usr_ ids
  due_at        TEXT,
  completed_at  TEXT,
  metadata      TEXT NOT NULL,                         -- JSON object
  archived_at   TEXT,
  created_by    TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX tack_cards_search ON tack_cards(search_id);
CREATE INDEX tack_cards_list_position ON tack_cards(list_id, position) WHERE archived_at IS NULL;
CREATE INDEX tack_cards_project ON tack_cards(project_id, created_at, id);

CREATE TABLE tack_card_labels (
  card_id   TEXT NOT NULL REFERENCES tack_cards(id) ON DELETE CASCADE,
  label_id  TEXT NOT NULL REFERENCES tack_labels(id) ON DELETE CASCADE,
  PRIMARY KEY (card_id, label_id)
);
CREATE INDEX tack_card_labels_label ON tack_card_labels(label_id, card_id);

CREATE TABLE tack_comments (
  id          TEXT PRIMARY KEY,                        -- cmt_...
  card_id     TEXT NOT NULL REFERENCES tack_cards(id) ON DELETE CASCADE,
  project_id  TEXT NOT NULL REFERENCES tack_projects(id) ON DELETE CASCADE,
  author_id   TEXT NOT NULL,
  body        TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE INDEX tack_comments_card ON tack_comments(card_id, created_at, id);

-- Immutable: rows are only inserted (in the transaction of the change they describe).
CREATE TABLE tack_activity (
  id          TEXT PRIMARY KEY,                        -- act_... (time-ordered)
  project_id  TEXT NOT NULL REFERENCES tack_projects(id) ON DELETE CASCADE,
  card_id     TEXT,
  actor_id    TEXT NOT NULL,
  action      TEXT NOT NULL,
  changes     TEXT NOT NULL,                           -- JSON {field: {from, to}}
  timestamp   TEXT NOT NULL
);
CREATE INDEX tack_activity_project ON tack_activity(project_id, timestamp, id);
CREATE INDEX tack_activity_card ON tack_activity(card_id, timestamp, id);

-- Full text over card titles and bodies. PostgreSQL variant of the SQLite FTS5 table: one
-- tsvector per card (key: the card's search_id; 'simple' configuration, no stemming, like
-- FTS5's unicode61) under a GIN index; queried with to_tsquery prefix terms, ranked by ts_rank.
CREATE TABLE tack_cards_fts (
  search_id  BIGINT PRIMARY KEY,
  doc        tsvector NOT NULL
);
CREATE INDEX tack_cards_fts_doc ON tack_cards_fts USING GIN (doc);
-- search_id values (SQLite, one writer at a time, takes MAX + 1).
CREATE SEQUENCE tack_cards_search_seq;

-- The built-in member role reads the board (non-clobbering: appended to its action list).
UPDATE platform_roles
   SET policy = replace(policy, '"tack.webhooks.read"', '"tack.webhooks.read","tack.workspace.read","tack.project.read","tack.card.read","tack.label.read","tack.comment.read","tack.activity.read"')
 WHERE name = 'member' AND builtin = 1;
