-- Mail service, content part: the workspace brand and the templates (templates, layouts
-- and partials) rendered by src/services/mail/content/.

-- One brand per workspace; no row means platform defaults everywhere.
CREATE TABLE mail_brands (
  workspace_id  TEXT PRIMARY KEY REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  raw           TEXT NOT NULL,                    -- JSON object: user-set tokens only
  updated_at    TEXT NOT NULL
);

CREATE TABLE mail_templates (
  id                TEXT PRIMARY KEY,             -- UUIDv7, kept across upserts
  workspace_id      TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  name              TEXT NOT NULL,                -- [a-z0-9_-]{1,64}
  kind              TEXT NOT NULL CHECK (kind IN ('template','layout','partial')),  -- fixed after the first create
  subject           TEXT NOT NULL,
  body_html         TEXT NOT NULL,
  body_text         TEXT,                         -- null: derived from the rendered HTML
  variables_schema  TEXT,                         -- JSON (version 1) or null
  tags              TEXT NOT NULL,                -- JSON array of strings (mail_template_tags is the index)
  source            TEXT NOT NULL DEFAULT 'manual',
  source_ref        TEXT,
  source_synced_at  TEXT,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  UNIQUE (workspace_id, name)
);

-- Tags of a template, for the tags filter and /templates/tags.
CREATE TABLE mail_template_tags (
  template_id   TEXT NOT NULL REFERENCES mail_templates(id) ON DELETE CASCADE,
  workspace_id  TEXT NOT NULL,
  tag           TEXT NOT NULL,
  PRIMARY KEY (template_id, tag)
);
CREATE INDEX mail_template_tags_workspace ON mail_template_tags(workspace_id, tag);
