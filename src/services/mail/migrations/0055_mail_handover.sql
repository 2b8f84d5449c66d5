-- 0055_mail_handover: when the worker holding a message's claim started handing it to the next
-- hop (set before the SMTP conversation, cleared by the outcome). A message reclaimed after a
-- crash with it set may have been accepted already: its retry is counted as a possible
-- duplicate (same Message-ID, so receivers can tell). Claim owners are now <node>/<process>/<claim>
-- (src/core/node-id.ts): a node restarting takes back its previous process's claims at once.
ALTER TABLE mail_messages ADD COLUMN handover_ms BIGINT;
