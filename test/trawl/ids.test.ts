/**
 * The extraction-job service's workspace_id is a UUID on every route under
 * /trawl/v1/workspaces/{workspace_id}: the job routes and the webhook scope's shared and
 * legacy routes. A malformed one (a "urn:uuid:" prefix too) is 400 VALIDATION_ERROR naming
 * workspace_id before the workspace is looked up; a well-formed unknown one is 404.
 * (Job ids and webhook_id: jobs-api.test.ts; the webhook ids: test/webhooks/ids.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { base } from "./helpers";

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp();
  token = (await ownerWithKey(app)).token;
});
afterAll(() => app.stop());

const UNKNOWN = "0192f3a1-7c2e-7a10-9b1e-3f5d2c8a4e61";
const BAD = ["not-a-uuid", `urn:uuid:${UNKNOWN}`, UNKNOWN.replaceAll("-", ""), `${UNKNOWN}0`];
const JOB = `job_${"0".repeat(32)}`;

/** Every route under the scope: [method, rest of the path, body]. */
const ROUTES: [string, string, unknown?][] = [
  ["GET", "/jobs"],
  ["GET", `/jobs/${JOB}`],
  ["POST", `/jobs/${JOB}/cancel`],
  ["GET", "/extraction-settings"],
  ["PUT", "/extraction-settings", { monthly_credit_limit: null }],
  ["GET", "/usage"],
  ["GET", "/webhooks/event-types"],
  ["GET", "/webhooks/endpoints"],
  ["POST", "/webhooks/endpoints", { url: "https://example.com/hook" }],
  ["GET", `/webhooks/endpoints/ep_${"0".repeat(32)}`],
  ["GET", "/webhooks/events"],
  ["GET", `/webhooks/events/evt_${"0".repeat(32)}`],
  ["GET", "/webhooks"],
  ["POST", "/webhooks", { url: "https://example.com/hook" }],
  ["GET", `/webhooks/whk_${"0".repeat(32)}`],
  ["DELETE", `/webhooks/whk_${"0".repeat(32)}`],
];

describe("workspace_id", () => {
  test("every route: 401 without a credential, 400 naming a malformed workspace_id, 404 for an unknown one", async () => {
    for (const [method, rest, body] of ROUTES) {
      const name = `${method} ${rest}`;
      expect([name, (await app.call(method, `${base(BAD[0]!)}${rest}`, { body })).status]).toEqual([name, 401]);
      for (const bad of BAD) {
        const r = await app.call(method, `${base(encodeURIComponent(bad))}${rest}`, { token, body });
        expect([name, bad, r.status, r.body.error?.code, r.body.error?.details?.map((d: any) => d.field)]).toEqual([name, bad, 400, "VALIDATION_ERROR", ["workspace_id"]]);
      }
      const unknown = await app.call(method, `${base(UNKNOWN)}${rest}`, { token, body });
      expect([name, unknown.status]).toEqual([name, 404]);
    }
  });

  test("the OpenAPI gives the webhook scope's workspace_id the strict UUID pattern", async () => {
    const doc = (await app.call("GET", "/docs/json")).body;
    for (const path of ["/trawl/v1/workspaces/{workspace_id}/webhooks/endpoints", "/trawl/v1/workspaces/{workspace_id}/webhooks", "/trawl/v1/workspaces/{workspace_id}/jobs"]) {
      const schema = doc.paths[path].get.parameters.find((p: any) => p.name === "workspace_id").schema;
      expect([path, schema.format, typeof schema.pattern]).toEqual([path, "uuid", "string"]);
    }
  });
});
