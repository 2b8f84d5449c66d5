-- 0095_member_service_reads: the built-in member role ("read access to the workspace and
-- its services") also reads what the mail, waitlist and extraction services added after
-- 0050: mailboxes (metadata; bodies stay with mail.message.body.read, which members lack),
-- suppressions, waitlists with their settings and entries, and extraction jobs. Appended
-- next to each service's webhooks.read with replace(), like 0060, so no other service's
-- additions are overwritten; portable to PostgreSQL as is.
UPDATE platform_roles
   SET policy = replace(replace(replace(policy,
         '"mail.webhooks.read"', '"mail.webhooks.read","mail.mailbox.read","mail.suppression.read"'),
         '"waitlist.webhooks.read"', '"waitlist.webhooks.read","waitlist.list","waitlist.read","waitlist.settings.read","waitlist.entry.read"'),
         '"trawl.webhooks.read"', '"trawl.webhooks.read","trawl.job.read"')
 WHERE id = '00000000-0000-7000-8000-000000000003' AND builtin = 1;
