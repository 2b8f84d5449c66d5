/** GET /platform/v1/admin/backup: the operator downloads a snapshot of the SQLite database; PostgreSQL answers 409. */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signup, startTestApp, type TestApp } from "../helpers/app";
import type { BinaryProcess } from "../helpers/binary";
import { TEST_ENGINE } from "../helpers/engine";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
let operator: string;
beforeAll(async () => {
  app = await startTestApp();
  // The setup link of the first start: printed by the binary; in-process, the bootstrap `bunker serve` runs mints it.
  const setupUrl = ON_BINARY ? /http\S*#setup=[A-Za-z0-9_-]+/.exec((app as unknown as { process: BinaryProcess }).process.output())![0] : (await app.platform.setup.bootstrap())!.setupUrl!;
  const r = await app.call("POST", "/platform/v1/auth/setup", { body: { email: "ops@example.com", username: "ops", password: "operator-password-1", setup_token: setupUrl.split("#setup=")[1] } });
  expect(r.status).toBe(200);
  operator = r.body.access_token;
});
afterAll(() => app.stop());

const download = (token?: string) => app.handle(new Request("http://localhost/platform/v1/admin/backup", { headers: token ? { authorization: `Bearer ${token}` } : {} }));

test("operators only: 401 without a credential, 403 OPERATOR_REQUIRED for another account", async () => {
  expect((await download()).status).toBe(401);
  const member = await signup(app, { email: "member@example.com", username: "member" });
  const r = await download(member.token);
  expect(r.status).toBe(403);
  expect(((await r.json()) as any).error.code).toBe("OPERATOR_REQUIRED");
});

inProcess("counts the instance.backup.download audit row in the store (app.ctx.db); the download itself runs on the binary in platform/every-route")("SQLite: an attachment that opens with bun:sqlite and holds the accounts, no temp file left; PostgreSQL: 409 pointing to pg_dump", async () => {
  const r = await download(operator);
  if (TEST_ENGINE === "postgres") {
    expect(r.status).toBe(409);
    const body = (await r.json()) as any;
    expect(body.error.code).toBe("BACKUP_NOT_AVAILABLE_ON_POSTGRES");
    expect(body.error.message).toContain("pg_dump");
    return;
  }
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("application/vnd.sqlite3");
  expect(r.headers.get("content-disposition")).toMatch(/^attachment; filename="bunker-\d{8}T\d{6}Z\.db"$/);
  const bytes = new Uint8Array(await r.arrayBuffer());
  expect(Number(r.headers.get("content-length"))).toBe(bytes.length);
  const file = join(tmpdir(), `backup-test-${crypto.randomUUID()}.db`);
  writeFileSync(file, bytes);
  const db = new Database(file, { readonly: true });
  try {
    const emails = (db.query("SELECT email FROM platform_accounts ORDER BY email").all() as { email: string }[]).map((a) => a.email);
    expect(emails).toContain("ops@example.com");
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  } finally {
    db.close();
  }
  expect(readdirSync(app.ctx.config.dataDir).filter((f) => f.startsWith(".backup-download-"))).toEqual([]);
  const audited = await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM platform_audit_log WHERE action = 'instance.backup.download'");
  expect(audited?.n).toBe(1);
});
