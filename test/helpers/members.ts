/** Puts people into workspaces the way users do: invite by email, read the mail, accept. */
import { signup, type TestApp } from "./app";

export const P = "/platform/v1";

/** The invitation token from the newest system mail to `email` (queued, not yet delivered). */
export async function queuedInviteToken(app: TestApp, email: string): Promise<string> {
  const mail = (await app.ctx.mailer.list(500)).find((m) => m.to.toLowerCase() === email.toLowerCase());
  const token = mail && /#invite=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
  if (!token) throw new Error(`no invitation mail to ${email}`);
  return token;
}

export async function accountIdOf(app: TestApp, token: string): Promise<string> {
  return (await app.call("GET", `${P}/introspect`, { token })).body.account.id;
}

/** Signs up a new user and makes them a member of `slug` with `roleId` (default: member). */
export async function addMember(app: TestApp, inviterToken: string, slug: string, roleId?: string) {
  const user = await signup(app);
  const inv = await app.call("POST", `${P}/workspaces/${slug}/invitations`, { token: inviterToken, body: { email: user.email, ...(roleId ? { role_id: roleId } : {}) } });
  if (inv.status !== 201) throw new Error(`invite failed: ${inv.status} ${JSON.stringify(inv.body)}`);
  const acc = await app.call("POST", `${P}/invitations/accept`, { token: user.token, body: { token: await queuedInviteToken(app, user.email) } });
  if (acc.status !== 201) throw new Error(`accept failed: ${acc.status} ${JSON.stringify(acc.body)}`);
  return { ...user, memberId: acc.body.member_id as string, accountId: await accountIdOf(app, user.token) };
}

/** Audit actions of a workspace, oldest first, straight from the table. */
export function auditActions(app: TestApp, workspaceId: string): Promise<{ action: string; target_id: string | null; actor_id: string | null }[]> {
  return app.ctx.db.all<{ action: string; target_id: string | null; actor_id: string | null }>(
    "SELECT action, target_id, actor_id FROM platform_audit_log WHERE workspace_id = ? ORDER BY id",
    workspaceId,
  );
}

export const BUILTIN = {
  owner: "00000000-0000-7000-8000-000000000001",
  admin: "00000000-0000-7000-8000-000000000002",
  member: "00000000-0000-7000-8000-000000000003",
} as const;
