/**
 * Usage accounting and the monthly credit limit: settings at their bounds, usage per month,
 * credits.low once at 90%, 402 CREDIT_LIMIT_REACHED at 100%, a new month starts afresh.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { DAY } from "../../src/core/clock";
import { creditsOf } from "../../src/services/trawl/jobs/service";
import { ownerWithKey, type TestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";
import type { FixtureSite } from "./fixture-site";
import { base, createJob, jobBody, runUntilFinal, useSiteAndApp } from "./helpers";

const shared = useSiteAndApp();
let app: TestApp;
let site: FixtureSite;
beforeAll(() => void ({ app, site } = shared));

const listing = { type: "object", properties: { items: { type: "array", items: { type: "object", properties: { name: { type: "string" }, price: { type: "number" } } } } }, required: ["items"] };

describe("settings", () => {
  inProcess("updated_at equals the frozen injected clock")("monthly_credit_limit: null by default, 1 to 1e9 or null", async () => {
    const { token, ws } = await ownerWithKey(app);
    const url = `${base(ws.id)}/extraction-settings`;
    expect((await app.call("GET", url, { token })).body).toEqual({ workspace_id: ws.id, monthly_credit_limit: null, updated_at: null });
    for (const v of [1, 1_000_000_000, null]) {
      const r = await app.call("PUT", url, { token, body: { monthly_credit_limit: v } });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ workspace_id: ws.id, monthly_credit_limit: v, updated_at: app.clock.iso() });
    }
    for (const v of [0, 1_000_000_001, 1.5, "ten"]) expect((await app.call("PUT", url, { token, body: { monthly_credit_limit: v } })).status).toBe(400);
  });

  test("credits: one per page plus one per started 1,000 LLM tokens", () => {
    const u = { steps: 3, pages_fetched: 3, bytes_fetched: 10, tokens_in: 0, tokens_out: 0 };
    expect(creditsOf(u)).toBe(3);
    expect(creditsOf({ ...u, tokens_in: 999, tokens_out: 1 })).toBe(4);
    expect(creditsOf({ ...u, tokens_in: 1000, tokens_out: 1 })).toBe(5);
  });
});

describe("usage and the limit", () => {
  inProcess("pumps the in-process webhook engine (dispatchPending) and moves the injected clock into the next month")("usage adds up; credits.low once at 90%; 402 at 100%; the next month starts afresh", async () => {
    const { token, ws } = await ownerWithKey(app);
    expect((await app.call("PUT", `${base(ws.id)}/extraction-settings`, { token, body: { monthly_credit_limit: 10 } })).status).toBe(200);
    const month = app.clock.iso().slice(0, 7);
    const runOne = async () => {
      const job = await createJob(app, token, ws.id, { json_schema: listing, description: "catalogue", suggested_urls: [`${site.url}/listing?page=1`] });
      return runUntilFinal(app, token, ws.id, job.id);
    };
    const lowEvents = async () => {
      await app.webhooks.dispatchPending();
      return (await app.call("GET", `${base(ws.id)}/webhooks/events?type=credits.low`, { token })).body.data;
    };
    for (let i = 0; i < 2; i++) expect((await runOne()).usage.pages_fetched).toBe(3);
    let usage = await app.call("GET", `${base(ws.id)}/usage`, { token });
    expect(usage.body).toMatchObject({ workspace_id: ws.id, month, jobs: 2, steps: 6, pages_fetched: 6, llm_tokens_in: 0, llm_tokens_out: 0, credits_used: 6, monthly_credit_limit: 10 });
    expect(usage.body.bytes).toBeGreaterThan(0);
    expect(await lowEvents()).toEqual([]);

    await runOne(); // 9 of 10: 90%
    const low = await lowEvents();
    expect(low.length).toBe(1);
    const detail = await app.call("GET", `${base(ws.id)}/webhooks/events/${low[0].id}`, { token });
    expect(JSON.stringify(detail.body)).toContain('"credits_used":9');

    // Still under 100%: one more job is accepted; it takes the workspace to 12.
    await runOne();
    expect(await lowEvents()).toHaveLength(1);
    const refused = await app.call("POST", `${base(ws.id)}/jobs`, { token, body: jobBody() });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe("CREDIT_LIMIT_REACHED");
    expect(refused.body.error.message).toContain("12 of its 10");

    usage = await app.call("GET", `${base(ws.id)}/usage?month=${month}`, { token });
    expect(usage.body.credits_used).toBe(12);
    expect((await app.call("GET", `${base(ws.id)}/usage?month=2026-13`, { token })).status).toBe(400);

    // A higher limit lifts the refusal at once.
    await app.call("PUT", `${base(ws.id)}/extraction-settings`, { token, body: { monthly_credit_limit: 13 } });
    expect((await app.call("POST", `${base(ws.id)}/jobs`, { token, body: jobBody() })).status).toBe(201);
    await app.call("PUT", `${base(ws.id)}/extraction-settings`, { token, body: { monthly_credit_limit: 10 } });

    app.clock.advance(15 * DAY);
    const next = app.clock.iso().slice(0, 7);
    expect(next).not.toBe(month);
    expect((await app.call("POST", `${base(ws.id)}/jobs`, { token, body: jobBody() })).status).toBe(201);
    expect((await app.call("GET", `${base(ws.id)}/usage`, { token })).body).toMatchObject({ month: next, jobs: 0, credits_used: 0 });
    expect((await app.call("GET", `${base(ws.id)}/usage?month=${month}`, { token })).body.credits_used).toBe(12);
  });
});
