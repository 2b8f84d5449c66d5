import { expect } from "bun:test";
import { startTestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";

inProcess("reads the account-level sign-in audit row from the store (app.ctx.db); no route serves account-level audit")("over real HTTP the client address reaches audit entries (Elysia gets the server)", async () => {
  const app = await startTestApp();
  const server = app.listen(0, "127.0.0.1");
  try {
    const r = await fetch(`http://127.0.0.1:${server.port}/platform/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "ip-test/1.0" },
      body: JSON.stringify({ email: "ip@example.com", username: "iptest", password: "12345678" }),
    });
    expect(r.status).toBe(200);
    await fetch(`http://127.0.0.1:${server.port}/platform/v1/auth/signin`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "ip-test/1.0" },
      body: JSON.stringify({ identifier: "iptest", password: "12345678" }),
    });
    const row = await app.ctx.db.get<{ ip: string; user_agent: string }>("SELECT ip, user_agent FROM platform_audit_log WHERE action = 'account.signin'");
    expect(row?.ip).toBe("127.0.0.1");
    expect(row?.user_agent).toBe("ip-test/1.0");
  } finally {
    await server.stop(true);
    await app.stop();
  }
});
