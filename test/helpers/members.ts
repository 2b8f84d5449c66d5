/** Puts people into workspaces the way users do: invite by email, read the mail, accept. */
import { signup, type TestApp } from "./app";
import { type BinaryProcess, ON_BINARY } from "./binary";
import type { SmtpSink } from "./smtp-sink";

export const P = "/platform/v1";

/**
 * The invitation token from the newest system mail to `email` (queued, not yet delivered).
 *
 * On the binary (npm run test:bin) the mail is the process's to send, by its scheduler: the
 * token is read where a person would find it, from the SMTP sink the app relays to (`sink`)
 * or, without a relay (dev mode), from the process's log, which prints every system mail.
 * It waits for an invitation it has not handed out before (the newest one in-process).
 */
export async function queuedInviteToken(app: TestApp, email: string, sink?: SmtpSink): Promise<string> {
  if (ON_BINARY) return deliveredInviteToken(app, email, sink);
  const mail = (await app.ctx.mailer.list(500)).find((m) => m.to.toLowerCase() === email.toLowerCase());
  const token = mail && /#invite=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
  if (!token) throw new Error(`no invitation mail to ${email}`);
  return token;
}

const handedOut = new Set<string>();

async function deliveredInviteToken(app: TestApp, email: string, sink?: SmtpSink): Promise<string> {
  const to = email.toLowerCase();
  const tokens = (): string[] => {
    if (sink) return sink.messages.filter((m) => m.to.some((t) => t.toLowerCase() === to)).flatMap((m) => /#invite=([A-Za-z0-9_-]+)/.exec(m.text)?.[1] ?? []);
    const out: string[] = [];
    for (const line of ((app as unknown as { process?: BinaryProcess }).process?.output() ?? "").split("\n")) {
      if (!line.includes("system mail (dev mode")) continue;
      try {
        const entry = JSON.parse(line) as { to?: string; text?: string };
        const token = entry.to?.toLowerCase() === to ? /#invite=([A-Za-z0-9_-]+)/.exec(entry.text ?? "")?.[1] : undefined;
        if (token) out.push(token);
      } catch {}
    }
    return out;
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    const fresh = tokens().filter((t) => !handedOut.has(t)).at(-1);
    if (fresh) {
      handedOut.add(fresh);
      return fresh;
    }
    if (Date.now() > deadline) throw new Error(`no invitation mail to ${email} within 20 s (the binary's scheduler sends it)`);
    await Bun.sleep(50);
  }
}

export async function accountIdOf(app: TestApp, token: string): Promise<string> {
  return (await app.call("GET", `${P}/introspect`, { token })).body.account.id;
}

/** Signs up a new user and makes them a member of `slug` with `roleId` (default: member). `sink`: the app's SMTP relay, if it has one (read on the binary). */
export async function addMember(app: TestApp, inviterToken: string, slug: string, roleId?: string, sink?: SmtpSink) {
  const user = await signup(app);
  const inv = await app.call("POST", `${P}/workspaces/${slug}/invitations`, { token: inviterToken, body: { email: user.email, ...(roleId ? { role_id: roleId } : {}) } });
  if (inv.status !== 201) throw new Error(`invite failed: ${inv.status} ${JSON.stringify(inv.body)}`);
  const acc = await app.call("POST", `${P}/invitations/accept`, { token: user.token, body: { token: await queuedInviteToken(app, user.email, sink) } });
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
