/**
 * Limits on what a stranger can make an App do (issue 29; kernel/identity/stranger-limits.ts): public
 * sign-ups per client address and per App, mail requests per client address, mails per
 * recipient. Low limits come from the environment. Varied client addresses: a server listening
 * on "::" is reached over 127.0.0.1 and over ::1, two addresses (in-process only: the binary
 * listens on IPv4).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOUR } from "../../src/core/clock";
import { startTestAppWithMail, type TestApp } from "../helpers/app";
import { createAuthApp, type TestAuthApp } from "../helpers/auth";
import { inProcess } from "../helpers/target";
import { floodResets } from "../helpers/reset-flood";

let seq = 0;
const uniq = (p: string) => `${p}${++seq}x${Date.now().toString(36)}`;
const newUser = () => ({ username: uniq("u"), email: `${uniq("u")}@example.com`, password: "correct horse battery" });

/** 429 RATE_LIMITED with a whole number of seconds in Retry-After, at most the hour. */
function expectRateLimited(r: { status: number; body: any; headers: Headers }) {
  expect(r.status).toBe(429);
  expect(r.body.error.code).toBe("RATE_LIMITED");
  const after = r.headers.get("retry-after");
  expect(after).toMatch(/^\d+$/);
  expect(Number(after)).toBeGreaterThanOrEqual(1);
  expect(Number(after)).toBeLessThanOrEqual(3600);
}

async function withApp(env: Record<string, string>) {
  const started = await startTestAppWithMail(env);
  return { ...started, a1: await createAuthApp(started.app, { send_verification_email: false }), a2: await createAuthApp(started.app, { send_verification_email: false }) };
}

const pkSignup = (app: TestApp, a: TestAuthApp, body: Record<string, unknown>) => app.call("POST", a.path("/auth/signup"), { token: a.publishable_key, body });

describe("sign-up limits", () => {
  let app: TestApp;
  let a1: TestAuthApp;
  let a2: TestAuthApp;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ app, a1, a2, stop } = await withApp({ SIGNUPS_PER_ADDRESS_PER_HOUR: "3", SIGNUPS_PER_APP_PER_HOUR: "100" }));
  });
  afterAll(() => stop());

  test("the 4th publishable-key sign-up from one address, over all Apps, is 429 with Retry-After and creates nothing; bad bodies and API-key sign-ups are not counted", async () => {
    expect((await pkSignup(app, a1, newUser())).status).toBe(200);
    expect((await pkSignup(app, a1, { ...newUser(), password: "short" })).status).toBe(400);
    expect((await pkSignup(app, a1, newUser())).status).toBe(200);
    expect((await pkSignup(app, a2, newUser())).status).toBe(200);
    const refused = newUser();
    expectRateLimited(await pkSignup(app, a1, refused));
    expectRateLimited(await pkSignup(app, a2, newUser()));
    // Nothing was created: the name is free and does not sign in.
    expect((await app.call("POST", a1.path("/auth/signin"), { body: { identifier: refused.username, password: refused.password } })).status).toBe(401);
    // The customer's backend (workspace API key) is not a stranger: not counted, not refused.
    expect((await app.call("POST", a1.path("/auth/signup"), { token: a1.key, body: refused })).status).toBe(200);
  });

  inProcess("moves the injected clock an hour")("the address may sign up again once its oldest sign-up is an hour old", async () => {
    expectRateLimited(await pkSignup(app, a1, newUser()));
    app.clock.advance(HOUR);
    expect((await pkSignup(app, a1, newUser())).status).toBe(200);
  });
});

inProcess("reaches the server over ::1 and 127.0.0.1; the binary listens on IPv4 only")("another address still signs up; the App's limit holds over every address and leaves other Apps alone", async () => {
  const { app, a1, a2, stop } = await withApp({ SIGNUPS_PER_ADDRESS_PER_HOUR: "2", SIGNUPS_PER_APP_PER_HOUR: "3" });
  const server = app.listen(0, "::");
  const over = (host: string) => (a: TestAuthApp, body: Record<string, unknown>) =>
    fetch(`http://${host}:${server.port}${a.path("/auth/signup")}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${a.publishable_key}` }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json(), headers: r.headers }));
  const v4 = over("127.0.0.1");
  const v6 = over("[::1]");
  try {
    expect((await v4(a1, newUser())).status).toBe(200);
    expect((await v4(a1, newUser())).status).toBe(200);
    expectRateLimited(await v4(a1, newUser()));
    expect((await v6(a1, newUser())).status).toBe(200); // the App's 3rd
    const full = await v6(a1, newUser());
    expectRateLimited(full);
    expect(full.body.error.message).toContain("right now");
    // The full App took nothing from ::1's allowance, and other Apps have their own.
    expect((await v6(a2, newUser())).status).toBe(200);
  } finally {
    await server.stop(true);
    await stop();
  }
});

describe("stranger-triggered mail", () => {
  let app: TestApp;
  let a1: TestAuthApp;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ app, a1, stop } = await withApp({ MAIL_PER_ADDRESS_PER_HOUR: "20", MAIL_PER_RECIPIENT_PER_HOUR: "2" }));
  });
  afterAll(() => stop());

  const requestReset = (email: string) => app.call("POST", a1.path("/auth/password/request-reset"), { body: { email } });
  const resetMails = async (to: string) => {
    await app.auth.verification.idle();
    return (await app.ctx.mailer.list(1000)).filter((m) => m.to === to && m.subject.includes("password reset")).length;
  };

  inProcess("counts the queued system mail in the store (app.ctx.mailer)")("a reset flood mails one recipient at most MAIL_PER_RECIPIENT_PER_HOUR times and answers alike for known and unknown addresses", async () => {
    const u = newUser();
    expect((await pkSignup(app, a1, u)).status).toBe(200);
    const nobody = `${uniq("nobody")}@example.com`;
    await floodResets(requestReset, u.email, nobody);
    expect(await resetMails(u.email)).toBe(2);
    expect(await resetMails(nobody)).toBe(0);
  });

  inProcess("reads the queued confirmation and sign-in codes in the store (app.ctx.mailer) and moves the injected clock past the 30 s spacing")("MFA: enrolment mails to an unproven address are dropped silently past the limit; sign-in codes answer 429", async () => {
    const u = newUser();
    const signedUp = await pkSignup(app, a1, u);
    const mailsTo = async (to: string, about: string) => (await app.ctx.mailer.list(1000)).filter((m) => m.to === to && m.subject.includes(about));
    // Anyone signed up can name any address for an email factor: its 3rd confirmation mail is not sent.
    const victim = `${uniq("victim")}@example.com`;
    for (let i = 0; i < 3; i++) expect((await app.call("POST", a1.path("/me/mfa/factors"), { token: signedUp.body.access_token, body: { type: "email", email: victim } })).status).toBe(201);
    expect(await mailsTo(victim, "confirm")).toHaveLength(2);
    // The user's own address: confirmed, then sign-in codes; the 3rd within the hour is 429.
    const own = await app.call("POST", a1.path("/me/mfa/factors"), { token: signedUp.body.access_token, body: { type: "email" } });
    const code = /\b(\d{6})\b/.exec((await mailsTo(u.email, "confirm")).at(-1)!.text)![1];
    expect((await app.call("POST", a1.path(`/me/mfa/factors/${own.body.id}/confirm`), { token: signedUp.body.access_token, body: { code } })).status).toBe(200);
    const ch = (await app.call("POST", a1.path("/auth/signin"), { body: { identifier: u.username, password: u.password } })).body;
    const send = () => app.call("POST", a1.path("/auth/mfa/send-code"), { body: { mfa_token: ch.mfa_token, factor_id: own.body.id } });
    expect((await send()).status).toBe(200);
    app.clock.advance(31_000);
    expect((await send()).status).toBe(200);
    app.clock.advance(31_000);
    expectRateLimited(await send());
    expect(await mailsTo(u.email, "sign-in code")).toHaveLength(2);
  });

  test("past MAIL_PER_ADDRESS_PER_HOUR mail requests the address gets 429 with Retry-After, known address or not; admin sends and invites count too", async () => {
    const u = newUser();
    expect((await pkSignup(app, a1, u)).status).toBe(200);
    // Two verification mails to the user (the App sends none at sign-up), then 429 for that recipient.
    const send = () => app.call("POST", a1.path("/auth/send-verification-email"), { token: a1.key, body: { email: u.email } });
    expect((await send()).status).toBe(202);
    expect((await send()).status).toBe(202);
    expectRateLimited(await send());
    // Invites to one address: the 3rd is refused and not created.
    const invitee = `${uniq("inv")}@example.com`;
    const invite = () => app.call("POST", a1.path("/invites"), { token: a1.key, body: { email: invitee, send_email: true } });
    expect((await invite()).status).toBe(201);
    expect((await invite()).status).toBe(201);
    expectRateLimited(await invite());
    const listed = await app.call("GET", a1.path("/invites?limit=100"), { token: a1.key });
    expect(listed.body.data.filter((i: any) => i.email === invitee)).toHaveLength(2);
    // Whatever else this file's tests asked for from this address (at most 20 an hour), it runs out.
    let last = 0;
    for (let i = 0; i < 20 && last !== 429; i++) last = (await requestReset(`${uniq("any")}@example.com`)).status;
    expect(last).toBe(429);
    expectRateLimited(await requestReset(u.email));
    expectRateLimited(await requestReset(`${uniq("nobody")}@example.com`));
  });
});
