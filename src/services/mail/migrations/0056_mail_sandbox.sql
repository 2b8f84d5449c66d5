-- 0056_mail_sandbox: the sandbox sending domain (src/services/mail/sandbox/). One per workspace,
-- named <short id>.sandbox.<MAIL_HOSTNAME>, active without DNS; its mail is never relayed out:
-- mail to an active mailbox of this instance is delivered into it, everything else is caught
-- in the workspace's dev outbox. For trying Bunker out, not for production.
ALTER TABLE mail_domains ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0;
-- One sandbox domain per workspace (the create route's 200-after-201 relies on it under races),
-- and no two workspaces share a sandbox name (the inbound path routes by name).
CREATE UNIQUE INDEX mail_domains_one_sandbox ON mail_domains(workspace_id) WHERE sandbox = 1;
CREATE UNIQUE INDEX mail_domains_sandbox_fqdn ON mail_domains(fqdn) WHERE sandbox = 1;

-- Messages from a sandbox domain: sandbox = 1 from the queue on; delivered_to says where the
-- delivery worker put it ('mailbox' or 'outbox'; null for every other message).
ALTER TABLE mail_messages ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mail_messages ADD COLUMN delivered_to TEXT;

-- The dev outbox: what a sandbox domain sent to addresses that are not mailboxes of this
-- instance. Kept: the newest 1,000 per workspace (older ones go as new ones arrive). A row
-- goes with its message (right to be forgotten) and its workspace.
CREATE TABLE mail_dev_outbox (
  id            TEXT PRIMARY KEY,                 -- UUIDv7
  workspace_id  TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  message_id    TEXT NOT NULL REFERENCES mail_messages(id) ON DELETE CASCADE,
  domain_id     TEXT,                             -- the sandbox domain (kept as text: the domain may go first)
  from_address  TEXT NOT NULL,                    -- as sent: "Name <addr>" or addr
  to_address    TEXT NOT NULL,
  subject       TEXT NOT NULL,
  headers       TEXT,                             -- JSON object of the extra headers
  html          TEXT,                             -- null when the workspace redacts bodies
  text          TEXT,
  created_at    TEXT NOT NULL
);
CREATE INDEX mail_dev_outbox_ws ON mail_dev_outbox(workspace_id, created_at, id);
CREATE INDEX mail_dev_outbox_message ON mail_dev_outbox(message_id);
