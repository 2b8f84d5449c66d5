/**
 * Who may do what in the mail service: a plain member (built-in member role) reads domains,
 * brand, templates and the message log, but may not change them, send, read bodies or
 * delete; an admin may. A member of another workspace gets 404, not 403.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkspace, signup } from "../helpers/app";
import { createTemplate, startSendingApp, workspaceWithDomain, type MailWorkspace, type SendingEnv } from "../helpers/mail-sending";
import { addMember, BUILTIN } from "../helpers/members";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink";
import { ON_BINARY } from "../helpers/target";

let e: SendingEnv;
let sink: SmtpSink;
let w: MailWorkspace;
let member: string;
let admin: string;
let outsider: string;
let messageId: string;

/**
 * A new member of `slug` with `roleId`; their session token. In-process addMember reads the
 * invitation from the system mailer's outbox (app.ctx); on the binary the invitation mail
 * arrives at the relay sink.
 */
async function newMember(inviter: string, slug: string, roleId?: string) {
  if (!ON_BINARY) return (await addMember(e.app, inviter, slug, roleId)).token;
  const user = await signup(e.app);
  const inv = await e.app.call("POST", `/platform/v1/workspaces/${slug}/invitations`, { token: inviter, body: { email: user.email, ...(roleId ? { role_id: roleId } : {}) } });
  expect(inv.status).toBe(201);
  const mail = await sink.waitFor((m) => m.to.includes(user.email.toLowerCase()) && m.text.includes("#invite="), 15_000);
  const token = /#invite=([A-Za-z0-9_-]+)/.exec(mail.text)![1];
  const acc = await e.app.call("POST", "/platform/v1/invitations/accept", { token: user.token, body: { token } });
  expect(acc.status).toBe(201);
  return user.token;
}

beforeAll(async () => {
  // On the binary the relay receives the invitation mails (and the workspace's own mail).
  sink = await startSmtpSink();
  e = await startSendingApp(ON_BINARY ? { SMTP_RELAY_URL: sink.url } : {});
  if (!ON_BINARY) e.sending.autoKick = false; // the binary's worker may deliver meanwhile: nothing here depends on it
  const owner = await signup(e.app);
  const ws = await createWorkspace(e.app, owner.token);
  w = await workspaceWithDomain(e, { token: owner.token, ws });
  member = await newMember(owner.token, ws.slug);
  admin = await newMember(owner.token, ws.slug, BUILTIN.admin);
  outsider = (await workspaceWithDomain(e)).token; // owner of another workspace
  await createTemplate(e, w, { name: "hello", subject: "Hello", body_html: "<p>Hello</p>" });
  const sent = await e.app.call("POST", `${w.base}/templates/hello/send`, { token: admin, body: { from: `hi@${w.fqdn}`, to: "ada@example.test", data: {} } });
  expect(sent.status).toBe(202);
  messageId = sent.body.message_ids[0];
});
afterAll(async () => {
  await e.stop();
  await sink.stop();
});

test("a member reads domains, brand, templates, messages and deliverability (200)", async () => {
  for (const path of ["/domains", "/brand", "/templates", "/templates/hello", "/messages", `/messages/${messageId}`, "/deliverability", "/messages/settings"]) {
    const r = await e.app.call("GET", `${w.base}${path}`, { token: member });
    expect([path, r.status]).toEqual([path, 200]);
  }
});

test("a member may not write, send, read bodies or delete (403); an admin may", async () => {
  const refused: [string, string, unknown?][] = [
    ["PUT", "/brand", { primary_color: "#112233" }],
    ["POST", "/templates", { name: "nope", subject: "S", body_html: "<p>x</p>" }],
    ["DELETE", "/templates/hello"],
    ["POST", "/domains", { fqdn: "member.example" }],
    ["POST", "/templates/hello/send", { from: `hi@${w.fqdn}`, to: "b@example.test", data: {} }],
    ["POST", "/templates/hello/test-send", { from: `hi@${w.fqdn}`, to: "b@example.test", data: {} }],
    ["GET", `/messages/${messageId}/body`],
    ["DELETE", "/messages?recipient=ada@example.test"],
    ["PATCH", "/messages/settings", { redact_bodies: true }],
    ["POST", "/suppressions", { email: "x@example.test", reason: "manual" }],
  ];
  for (const [method, path, body] of refused) {
    const r = await e.app.call(method, `${w.base}${path}`, { token: member, body });
    expect([method, path, r.status]).toEqual([method, path, 403]);
  }
  expect((await e.app.call("PUT", `${w.base}/brand`, { token: admin, body: { primary_color: "#112233" } })).status).toBe(200);
  expect((await e.app.call("GET", `${w.base}/messages/${messageId}/body`, { token: admin })).status).toBe(200);
  expect((await e.app.call("POST", `${w.base}/templates/hello/test-send`, { token: admin, body: { from: `hi@${w.fqdn}`, to: "b@example.test", data: {} } })).status).toBe(202);
});

test("another workspace's owner gets 404 on this workspace's mail, whatever the route", async () => {
  for (const [method, path] of [["GET", "/domains"], ["GET", `/messages/${messageId}`], ["GET", `/messages/${messageId}/body`], ["GET", "/templates/hello"], ["PUT", "/brand"]] as const) {
    const r = await e.app.call(method, `${w.base}${path}`, { token: outsider, body: method === "PUT" ? {} : undefined });
    expect([method, path, r.status]).toEqual([method, path, 404]);
  }
});
