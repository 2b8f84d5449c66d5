// source-only: waits until the in-process token log (app.auth.m2m.tokenLog) was refused before it lets the database go
/**
 * The token log written behind (client_credentials audit rows) loses nothing while another
 * connection holds the database: on SQLite a long write transaction on the same file (a bulk
 * write by another process), on PostgreSQL an exclusive lock on the audit table while the
 * app's connections are cut. Every token's audit row is there once the database is back.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp } from "../helpers/auth";
import { testDatabaseUrl } from "../helpers/engine";
import { until } from "../helpers/until";
import { holdDatabase } from "./write-behind-hold";

let app: TestApp;
let dbUrl: string | null;
beforeAll(async () => {
  dbUrl = await testDatabaseUrl();
  app = await startTestApp(dbUrl ? { DATABASE_URL: dbUrl } : {});
});
afterAll(() => app.stop());

test(
  "client_credentials tokens issued while another connection holds the database: every audit row is written once it is released",
  async () => {
    const a = await createAuthApp(app);
    const created = await app.call("POST", `/auth/v1/apps/${a.id}/m2m-clients`, { token: a.key, body: { name: "backend", permissions: ["auth.user.read"] } });
    expect(created.status).toBe(201);
    const { client_id, client_secret } = created.body;

    const release = await holdDatabase(app, dbUrl, "auth_audit");
    const N = 20;
    for (let i = 0; i < N; i++) {
      const r = await app.call("POST", a.path("/oauth/token"), { body: { grant_type: "client_credentials", client_id, client_secret } });
      expect(r.status).toBe(200);
    }
    const log = app.auth.m2m.tokenLog;
    void log.flush();
    await until("the token log's batch to be refused", () => log.retrying, 30_000);
    await release();

    const audit = await app.call("GET", a.path(`/audit-log?action=m2m.token&limit=100`), { token: a.key });
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(N);
    expect(audit.body.data.every((e: any) => e.actor.id === client_id && e.outcome === "success")).toBe(true);
    expect(log.retrying).toBe(false);
  },
  60_000,
);
