/**
 * Limits on what a stranger can make the console do (issue 29; kernel/identity/stranger-limits.ts):
 * sign-ups per client address and for the whole console, reset requests per client address,
 * reset mails and invitations per recipient. Low limits come from the environment. Varied
 * client addresses: a server listening on "::" is reached over 127.0.0.1 and over ::1 (in-process
 * only: the binary listens on IPv4).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOUR } from "../../src/core/clock";
import { createWorkspace, signup, startTestApp, startTestAppWithMail, type TestApp } from "../helpers/app";
import { P } from "../helpers/members";
import { inProcess } from "../helpers/target";
import { floodResets } from "../helpers/reset-flood";

let seq = 0;
const uniq = (p: string) => `${p}${++seq}x${Date.now().toString(36)}`;
const newAccount = () => ({ email: `${uniq("c")}@example.com`, username: uniq("c"), password: "correct horse battery" });

/** 429 RATE_LIMITED with a whole number of seconds in Retry-After, at most the hour. */
function expectRateLimited(r: { status: number; body: any; headers: Headers }) {
  expect(r.status).toBe(429);
  expect(r.body.error.code).toBe("RATE_LIMITED");
  expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(Number(r.headers.get("retry-after"))).toBeLessThanOrEqual(3600);
}

describe("console sign-up limits", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ SIGNUPS_PER_ADDRESS_PER_HOUR: "2", SIGNUPS_PER_APP_PER_HOUR: "100" });
  });
  afterAll(() => app.stop());
  const signupCall = (body: Record<string, unknown>) => app.call("POST", `${P}/auth/signup`, { body });

  test("the 3rd sign-up from one address is 429 with Retry-After and creates nothing; a bad body is 400 and not counted", async () => {
    expect((await signupCall(newAccount())).status).toBe(200);
    expect((await signupCall({ ...newAccount(), password: "short" })).status).toBe(400);
    expect((await signupCall(newAccount())).status).toBe(200);
    const refused = newAccount();
    expectRateLimited(await signupCall(refused));
    expect((await app.call("POST", `${P}/auth/signin`, { body: { identifier: refused.email, password: refused.password } })).status).toBe(401);
  });

  inProcess("moves the injected clock an hour")("the address may sign up again an hour later", async () => {
    expectRateLimited(await signupCall(newAccount()));
    app.clock.advance(HOUR);
    expect((await signupCall(newAccount())).status).toBe(200);
  });
});

inProcess("reaches the server over ::1 and 127.0.0.1; the binary listens on IPv4 only")("another address still signs up; the console's limit holds over every address", async () => {
  const app = await startTestApp({ SIGNUPS_PER_ADDRESS_PER_HOUR: "2", SIGNUPS_PER_APP_PER_HOUR: "3" });
  const server = app.listen(0, "::");
  const over = (host: string) => (body: Record<string, unknown>) =>
    fetch(`http://${host}:${server.port}${P}/auth/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json(), headers: r.headers }));
  const v4 = over("127.0.0.1");
  const v6 = over("[::1]");
  try {
    expect((await v4(newAccount())).status).toBe(200);
    expect((await v4(newAccount())).status).toBe(200);
    expectRateLimited(await v4(newAccount()));
    expect((await v6(newAccount())).status).toBe(200);
    const full = await v6(newAccount());
    expectRateLimited(full);
    expect(full.body.error.message).toContain("right now");
  } finally {
    await server.stop(true);
    await app.stop();
  }
});

describe("console mail", () => {
  let app: TestApp;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ app, stop } = await startTestAppWithMail({ MAIL_PER_ADDRESS_PER_HOUR: "12", MAIL_PER_RECIPIENT_PER_HOUR: "2" }));
  });
  afterAll(() => stop());
  const requestReset = (email: string) => app.call("POST", `${P}/auth/password/request-reset`, { body: { email } });

  inProcess("counts the queued system mail in the store (app.ctx.mailer)")("a reset flood mails one recipient at most MAIL_PER_RECIPIENT_PER_HOUR times and answers alike for known and unknown addresses", async () => {
    const u = await signup(app);
    const nobody = `${uniq("nobody")}@example.com`;
    await floodResets(requestReset, u.email, nobody);
    await app.platform.accounts.idle();
    const mails = (await app.ctx.mailer.list(1000)).filter((m) => m.subject.includes("password reset"));
    expect(mails.filter((m) => m.to === u.email)).toHaveLength(2);
    expect(mails.filter((m) => m.to === nobody)).toHaveLength(0);
  });

  test("invitations to one address: the 3rd within the hour is 429 and not created; past MAIL_PER_ADDRESS_PER_HOUR the address gets 429 for resets too", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const invitee = `${uniq("inv")}@example.com`;
    const invite = () => app.call("POST", `${P}/workspaces/${ws.slug}/invitations`, { token: owner.token, body: { email: invitee } });
    expect((await invite()).status).toBe(201);
    expect((await invite()).status).toBe(201); // replaces the first
    expectRateLimited(await invite());
    const pending = await app.call("GET", `${P}/workspaces/${ws.slug}/invitations`, { token: owner.token });
    expect(pending.body.data.filter((i: any) => i.email === invitee)).toHaveLength(1);
    // Whatever this file's tests asked for from this address (at most 12 an hour), it runs out.
    let last = 0;
    for (let i = 0; i < 12 && last !== 429; i++) last = (await requestReset(`${uniq("any")}@example.com`)).status;
    expect(last).toBe(429);
    expectRateLimited(await requestReset(owner.email));
  });
});
