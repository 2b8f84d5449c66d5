-- Mail service, domains part (issue 13): sending/receiving domains of a workspace with their
-- DKIM keys and DNS checks (src/services/mail/domains/). Portable SQL (SQLite and PostgreSQL).

-- seq_id: per-workspace counter, never reused after a delete.
CREATE TABLE mail_domain_seq (
  workspace_id  TEXT PRIMARY KEY REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  last_seq      INTEGER NOT NULL
);

CREATE TABLE mail_domains (
  id                     TEXT PRIMARY KEY,                 -- UUIDv7
  workspace_id           TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  seq                    INTEGER NOT NULL,                 -- seq_id (as a string in the API)
  owner_account_id       TEXT,                             -- the account that added it (an API key: its minter)
  fqdn                   TEXT NOT NULL,                    -- ASCII (IDNA A-labels), lower case, no trailing dot
  intent                 TEXT NOT NULL CHECK (intent IN ('send','receive','send_receive')),
  status                 TEXT NOT NULL CHECK (status IN ('pending','active','failed')),
  verification_token     TEXT NOT NULL,
  test_token             TEXT NOT NULL,
  test_received_at       TEXT,
  dkim_selector          TEXT NOT NULL,
  dkim_public_key        TEXT NOT NULL,                    -- PEM (SPKI)
  dkim_private_key       TEXT NOT NULL,                    -- PEM (PKCS#8), encrypted with the master key (secretBox)
  -- While a rotation waits for the new record: the key that keeps signing (then retired).
  dkim_prev_selector     TEXT,
  dkim_prev_public_key   TEXT,
  dkim_prev_private_key  TEXT,                             -- encrypted, like dkim_private_key
  dns_provider           TEXT,
  dns_check_results      TEXT NOT NULL,                    -- JSON object, by record purpose
  last_dns_check_at      TEXT,
  dns_check_lease_until  TEXT,                             -- a node's claim on the scheduled check
  verified_at            TEXT,
  failed_at              TEXT,
  created_at             TEXT NOT NULL,
  updated_at             TEXT NOT NULL,
  UNIQUE (workspace_id, fqdn),
  UNIQUE (workspace_id, seq)
);
-- The scheduled DNS check: due domains by status and last check.
CREATE INDEX mail_domains_due ON mail_domains(status, last_dns_check_at);
-- Active send domains by name (the sending pipeline's lookup of a From domain).
CREATE INDEX mail_domains_fqdn ON mail_domains(fqdn);

-- The built-in member role also reads the mail service (domains, brand, templates, message
-- log), but not message bodies (mail.message.body.read) and no write or delete. The policy
-- of 0033 plus the four mail reads; updated_at is left as it was (portable SQL).
UPDATE platform_roles
   SET policy = '[{"effect":"allow","actions":["workspace.read","member.list","role.list","role.read","service.list","mail.webhooks.read","waitlist.webhooks.read","trawl.webhooks.read","auth.app.list","auth.app.read","auth.user.list","auth.user.read","auth.tenant.read","auth.role.read","auth.invite.list","auth.m2m.list","auth.webhooks.read","tack.webhooks.read","social.list","social.read","social.webhooks.read","mail.domain.read","mail.brand.read","mail.template.read","mail.message.read"],"resources":["*"]}]'
 WHERE id = '00000000-0000-7000-8000-000000000003' AND builtin = 1;
