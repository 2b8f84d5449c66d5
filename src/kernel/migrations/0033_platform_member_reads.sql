-- 0033_platform_member_reads: the built-in member role ("read access to the workspace and
-- its services") also reads the services it can see: Auth Apps, the card board's webhooks
-- and communities. Built-in roles are shared rows that no route writes, so this is where
-- they change. Left out on purpose, as for the platform (member has no audit.list or
-- apikey.*): auth.audit.list (IP addresses and user agents of end users) and every write.
UPDATE platform_roles
   SET policy = '[{"effect":"allow","actions":["workspace.read","member.list","role.list","role.read","service.list","mail.webhooks.read","waitlist.webhooks.read","trawl.webhooks.read","auth.app.list","auth.app.read","auth.user.list","auth.user.read","auth.tenant.read","auth.role.read","auth.invite.list","auth.m2m.list","auth.webhooks.read","tack.webhooks.read","social.list","social.read","social.webhooks.read"],"resources":["*"]}]',
       updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
 WHERE id = '00000000-0000-7000-8000-000000000003' AND builtin = 1;
