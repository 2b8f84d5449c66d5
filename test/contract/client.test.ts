/**
 * The OpenAPI as a product, checked with the stock tools an API user runs on it:
 * - `@redocly/cli lint` (recommended rules) finds no error in /docs/json;
 * - openapi-typescript generates a client from the served document, `tsc --strict` checks a
 *   short flow per service written against it (client/flow.ts: integers are numbers, query
 *   parameters typed, each answer has a schema), and the flow then runs against the server
 *   through openapi-fetch.
 * Tool versions are pinned in package.json.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { startTestApp, type TestApp } from "../helpers/app";
import { createOperator } from "../helpers/console-app";

const ROOT = join(import.meta.dir, "../..");
const CLIENT = join(import.meta.dir, "client");

let app: TestApp;
let doc: Record<string, unknown>;

beforeAll(async () => {
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
  doc = (await app.call("GET", "/docs/json")).body;
});
afterAll(() => app?.stop());

function run(cmd: string[]) {
  const p = Bun.spawnSync(cmd, { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

test("redocly lint (recommended): no error in the served document", () => {
  const file = join(mkdtempSync(join(tmpdir(), "bunker-openapi-")), "openapi.json");
  writeFileSync(file, JSON.stringify(doc));
  const r = run([join(ROOT, "node_modules/.bin/redocly"), "lint", "--extends", "recommended", "--format", "json", "--max-problems", "10000", file]);
  const report = JSON.parse(r.out);
  const errors = report.problems.filter((p: { severity: string }) => p.severity === "error").map((p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`);
  expect(errors).toEqual([]);
}, 60_000);

test("a client generated from the document type-checks strictly and runs a flow per service", async () => {
  mkdirSync(join(CLIENT, "generated"), { recursive: true });
  writeFileSync(join(CLIENT, "generated/api.d.ts"), astToString(await openapiTS(doc as any)));
  const tsc = run([join(ROOT, "node_modules/.bin/tsc"), "-p", join(CLIENT, "tsconfig.json")]);
  expect(tsc.out + tsc.err).toBe("");
  expect(tsc.code).toBe(0);

  // Imported by path, so the repository's own type check does not follow it before the
  // client is generated (the flow is type-checked above, against the generated types).
  const { runFlow } = (await import(join(CLIENT, "flow.ts"))) as { runFlow: (o: Record<string, unknown>) => Promise<string[]> };
  const session = await createOperator(app);
  const steps = await runFlow({
    baseUrl: app.process ? app.base! : "http://localhost",
    fetch: app.process ? undefined : (request: Request) => app.handle(request),
    session,
    unique: Date.now().toString(36),
  });
  expect(steps.length).toBe(7);
}, 120_000);
