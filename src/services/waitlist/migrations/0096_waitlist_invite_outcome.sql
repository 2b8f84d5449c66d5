-- Waitlist: the outcome of an approved entry's Auth invite, on the entry (its `invite` object),
-- so a refusal by the Auth App (e.g. the email is already a user) is visible without the
-- server log. invite_status: NULL (no invite for this entry) | pending | sent | failed.
-- Portable to PostgreSQL as is.
ALTER TABLE waitlist_entries ADD COLUMN invite_status TEXT;
ALTER TABLE waitlist_entries ADD COLUMN invite_app_slug TEXT;
ALTER TABLE waitlist_entries ADD COLUMN invite_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE waitlist_entries ADD COLUMN invite_error_code TEXT;
ALTER TABLE waitlist_entries ADD COLUMN invite_error_message TEXT;
ALTER TABLE waitlist_entries ADD COLUMN invite_updated_at TEXT;

-- Invites made before this migration.
UPDATE waitlist_entries SET invite_status = 'sent', invite_app_slug = invited_to_app_slug, invite_attempts = 1, invite_updated_at = invited_at
 WHERE invited_at IS NOT NULL;

-- Approved entries not invited, in a workspace with an Auth App set: their invite is still being
-- tried (pending) or was given up (failed). The outbox kept only the error's text: the code is
-- INVITE_FAILED for all of them.
UPDATE waitlist_entries
   SET invite_status = (SELECT CASE WHEN n.state = 'failed' THEN 'failed' ELSE 'pending' END FROM waitlist_notifications n
                         WHERE n.entry_id = waitlist_entries.id AND n.kind = 'approved' ORDER BY n.created_at DESC, n.id DESC LIMIT 1),
       invite_app_slug = (SELECT s.default_auth_app_slug FROM waitlist_settings s WHERE s.workspace_id = waitlist_entries.workspace_id),
       invite_attempts = (SELECT MAX(n.attempts) FROM waitlist_notifications n WHERE n.entry_id = waitlist_entries.id AND n.kind = 'approved'),
       invite_error_code = (SELECT MAX(CASE WHEN n.last_error IS NOT NULL THEN 'INVITE_FAILED' END) FROM waitlist_notifications n WHERE n.entry_id = waitlist_entries.id AND n.kind = 'approved'),
       invite_error_message = (SELECT MAX(n.last_error) FROM waitlist_notifications n WHERE n.entry_id = waitlist_entries.id AND n.kind = 'approved'),
       invite_updated_at = (SELECT MAX(n.updated_at) FROM waitlist_notifications n WHERE n.entry_id = waitlist_entries.id AND n.kind = 'approved')
 WHERE invited_at IS NULL AND status = 'approved'
   AND EXISTS (SELECT 1 FROM waitlist_notifications n WHERE n.entry_id = waitlist_entries.id AND n.kind = 'approved' AND n.state <> 'done')
   AND EXISTS (SELECT 1 FROM waitlist_settings s WHERE s.workspace_id = waitlist_entries.workspace_id AND s.default_auth_app_slug IS NOT NULL);
