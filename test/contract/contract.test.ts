/**
 * The contract test: for every operation of the served OpenAPI (/docs/json), the cases of
 * cases.ts, sent over HTTP with the credential the operation declares. Nothing here knows a
 * service: a route that is added is tested by being documented. Prints how many operations
 * and cases ran, by kind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser } from "../helpers/auth";
import { createOperator } from "../helpers/console-app";
import { casesOf, type Case, type Operation, type Schema } from "./cases";

let app: TestApp;
let doc: { paths: Record<string, Record<string, Schema>> };
let credentials: Record<string, string>;
let known: Record<string, string>;

beforeAll(async () => {
  // The card board's per-key limits would count the thousands of requests below.
  app = await startTestApp({ TACK_RATE_WRITES: "0", TACK_RATE_READS: "0", TACK_RATE_BATCH: "0" });
  const owner = await ownerWithKey(app);
  const authApp = await createAuthApp(app);
  const user = await signupEndUser(app, authApp);
  // The operator's console session: the operator routes are within reach too.
  credentials = { consoleToken: await createOperator(app), apiKey: owner.token, appUserToken: user.access, publishableKey: authApp.publishable_key };
  // The App's slug is real so that an end user's token belongs to the App it is sent to.
  known = { app_slug: authApp.slug };
  const r = await app.call("GET", "/docs/json");
  doc = r.body;
});
afterAll(() => app?.stop());

/** The credential to send: the first declared scheme this test holds. */
function credentialFor(op: Schema): string | undefined {
  for (const req of op.security ?? []) for (const name of Object.keys(req)) if (credentials[name]) return credentials[name];
  return undefined;
}

const operations = (): Operation[] =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ method, path, op })));

const names = (body: any): string[] => (body?.error?.details ?? []).map((d: { field: string }) => d.field);

/** The 400 names the field: exactly, or as the head of a nested path (`settings.x`). */
const namesField = (body: any, field: string) => names(body).some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}/`));

describe("every documented operation keeps its contract", () => {
  test("credential before input, typed fields, malformed and unknown ids, no 5xx", async () => {
    const failures: string[] = [];
    const counts: Record<string, number> = {};
    const ops = operations();
    for (const o of ops) {
      const token = credentialFor(o.op);
      const ownErrors = !documentsErrorBody(o.op);
      for (const c of casesOf(o, known)) {
        counts[c.kind] = (counts[c.kind] ?? 0) + 1;
        const headers = c.contentType ? { "content-type": c.contentType } : undefined;
        const r = await app.call(o.method.toUpperCase(), c.url, { body: c.body, headers, token: c.token ?? (c.credential ? token : undefined) });
        const exception = EXCEPTIONS[`${c.kind} ${o.method.toUpperCase()} ${o.path}`];
        if (exception) {
          counts.documented_exception = (counts.documented_exception ?? 0) + 1;
          if (r.status >= 500) failures.push(`${c.label}: answered ${r.status}`);
          continue;
        }
        const verdict = judge(c, r.status, r.body, ownErrors);
        if (verdict) failures.push(`${c.label}: ${verdict}`);
      }
    }
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(`contract: ${ops.length} operations, ${total} cases (${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(", ")}), ${failures.length} failed`);
    expect(failures).toEqual([]);
  }, 300_000);
});

/**
 * Where the API deliberately answers otherwise, and why (each one a decision, not a gap).
 */
const EXCEPTIONS: Record<string, string> = {
  "unknown_id GET /platform/v1/introspect/workspaces/{workspace_id}":
    "answers is_member false for any id the caller is not a member of, so it cannot tell a stranger which workspaces exist",
  ...Object.fromEntries(
    ["GET /platform/v1/auth/oauth/{provider}/start", "GET /platform/v1/auth/oauth/{provider}/callback", "GET /auth/{app_slug}/v1/auth/oauth/{provider}/authorize", "GET /auth/{app_slug}/v1/auth/oauth/{provider}/callback"].map((op) => [
      `unknown_id ${op}`,
      "a provider is a name (idp_1, idp_2, idp_3), not an id: one that is not configured is 400 UNKNOWN_OAUTH_PROVIDER naming provider",
    ]),
  ),
};

/** An operation whose 400 is not the house error body (OAuth's token endpoint: RFC 6749 errors). */
function documentsErrorBody(op: Schema): boolean {
  const schema = op.responses?.["400"]?.content?.["application/json"]?.schema;
  return !schema || schema.$ref === "#/components/schemas/ErrorBody";
}

function judge(c: Case, status: number, body: any, ownErrors: boolean): string | null {
  if (status >= 500) return `answered ${status} ${JSON.stringify(body)}`;
  switch (c.kind) {
    case "credential":
      return status === 401 ? null : `without a credential answered ${status}, not 401 ${JSON.stringify(body).slice(0, 200)}`;
    case "unknown_id":
      return status === 404 ? null : `answered ${status}, not 404 ${JSON.stringify(body).slice(0, 200)}`;
    default:
      if (status !== 400) return `answered ${status}, not 400 ${JSON.stringify(body).slice(0, 200)}`;
      if (ownErrors) return null;
      if (body?.error?.code !== "VALIDATION_ERROR") return `400 with code ${body?.error?.code}, not VALIDATION_ERROR`;
      return namesField(body, c.field!) ? null : `400 does not name ${c.field}: ${JSON.stringify(names(body))}`;
  }
}
