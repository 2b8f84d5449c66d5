/**
 * `npm run bench -- trawl`: issue 17 "Speed and quality", against a real Bunker server
 * (subprocess, SQLite), everything on 127.0.0.1; the fixture website of the tests
 * (test/trawl/fixture-site.ts) runs in this process.
 *
 * (b) pages extracted offline: BENCH_TRAWL_JOBS jobs (default 100) over the fixture set
 *     (product, paginated listing of 3 pages, article, spec sheet, microdata, JSON), no
 *     LLM_BASE_URL, TRAWL_CONCURRENCY=BENCH_TRAWL_CONCURRENCY (default 4); pages/s = pages
 *     fetched by the jobs / (first create -> every job final). Same-run baseline: this
 *     process fetching the same pages with plain fetch and parsing each with linkedom, as
 *     many in flight: the ceiling of fetch + parse alone. Target >= 50 pages/s.
 * (a) job creates/s: POST /trawl/v1/workspaces/{id}/jobs under wrk (fixed body, no
 *     Idempotency-Key: every request creates a job), interleaved with a bare Bun.serve
 *     hello-world. The jobs point at the fixture's slow page, so the worker holds
 *     TRAWL_CONCURRENCY of them meanwhile (as real extractions, which take seconds, would)
 *     rather than racing the creates through a backlog. Target >= 2,000 creates/s.
 * (c) quality: the fixture set through the pipeline in this process, fields correct / fields
 *     expected, with the heuristic extractor and with an OpenAI-compatible stub whose
 *     answers are the expected values in damaged forms (code fences, single quotes, trailing
 *     commas, a wrong type first, nulls): that column measures parsing, repair, validation
 *     and merging, not a model.
 *
 * Environment: BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_ROUNDS (3), BENCH_THREADS /
 * BENCH_CONNECTIONS (wrk, 2 / 64), BENCH_TRAWL_JOBS (100), BENCH_TRAWL_CONCURRENCY (4).
 * Report only; exits 0 whether targets are met or not.
 */
import { parseHTML } from "linkedom";
import { createOutboundHttp } from "../../src/core/outbound-http";
import { LlmClient } from "../../src/services/trawl/worker/pipeline/llm";
import { runJob } from "../../src/services/trawl/worker/pipeline/run";
import { SchemaCompiler, withoutRequired, type JsonObject } from "../../src/services/trawl/schema";
import { ARTICLE, LISTING_ITEMS, PRODUCT, SPECS, startFixtureSite, type FixtureSite } from "../../test/trawl/fixture-site";
import { startLlmStub } from "../../test/trawl/llm-stub";
import { api, benchOwner, benchPrelude, envNumber, fmtNum, vsBunServe, mapLimit, median, sleep, startBaseline, startBunker, table, wrkFootnote, wrkSettings, wrkTable, type RequestSpec } from "./lib";

const str = { type: "string" };
const num = { type: "number" };
const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: "object", properties, required });

interface Case {
  name: string;
  paths: string[];
  pages: number;
  schema: JsonObject;
  expected: JsonObject;
}

const CASES: Case[] = [
  {
    name: "product (JSON-LD, OpenGraph)",
    paths: ["/product"],
    pages: 1,
    schema: obj({ name: str, price: num, currency: str, sku: str, brand: str, in_stock: { type: "boolean" }, plate: str }, ["name", "price"]),
    expected: { name: PRODUCT.name, price: PRODUCT.price, currency: PRODUCT.currency, sku: PRODUCT.sku, brand: PRODUCT.brand, in_stock: true, plate: "rock plate" },
  },
  { name: "listing, 3 pages (tables, rel=next)", paths: ["/listing?page=1"], pages: 3, schema: obj({ items: { type: "array", items: obj({ name: str, price: num }) } }, ["items"]), expected: { items: LISTING_ITEMS } },
  {
    name: "article (meta tags)",
    paths: ["/article"],
    pages: 1,
    schema: obj({ headline: str, author: str, published_at: str, description: str }, ["headline"]),
    expected: { headline: ARTICLE.headline, author: ARTICLE.author, published_at: ARTICLE.published, description: "A story about one file." },
  },
  { name: "spec sheet (dl, key/value table)", paths: ["/specs"], pages: 1, schema: obj({ weight_grams: { type: "integer" }, drop_mm: num, waterproof: { type: "boolean" }, color: str }, ["weight_grams"]), expected: { ...SPECS } },
  { name: "microdata product", paths: ["/micro"], pages: 1, schema: obj({ name: str, sku: str, price: num, currency: str }, ["name"]), expected: { name: "Summit Pack 30", sku: "SP-30", price: 149, currency: "USD" } },
  { name: "JSON endpoint", paths: ["/api/product"], pages: 1, schema: obj({ name: str, sku: str, price: num }, ["name"]), expected: { name: PRODUCT.name, sku: PRODUCT.sku, price: PRODUCT.price } },
];

/** Fields of an expected object: one per scalar, one per scalar of each array item. */
function score(expected: JsonObject, got: JsonObject | null): { correct: number; total: number } {
  let correct = 0;
  let total = 0;
  for (const [k, v] of Object.entries(expected)) {
    if (Array.isArray(v)) {
      const items = Array.isArray(got?.[k]) ? (got![k] as JsonObject[]) : [];
      v.forEach((item, i) => {
        for (const [f, x] of Object.entries(item as JsonObject)) {
          total++;
          if (items[i]?.[f] === x) correct++;
        }
      });
      continue;
    }
    total++;
    if (got && got[k] === v) correct++;
  }
  return { correct, total };
}

// --- (c) quality ------------------------------------------------------------------------------

/** The stub's answer for a page: the expected values of its case, damaged in one way per case. */
function stubAnswer(userText: string, turn: number): string {
  const path = new URL(/URL: (\S+)/.exec(userText)![1]).pathname;
  const c = CASES.find((x) => x.paths[0].split("?")[0] === path)!;
  if (c.paths[0].startsWith("/listing")) {
    const rows = [...userText.matchAll(/\| ([A-Z][\w ]+?) \| \$([\d.]+) \|/g)].map((m) => ({ name: m[1], price: Number(m[2]) }));
    return JSON.stringify({ items: rows });
  }
  const e = c.expected;
  if (c.paths[0] === "/product") return "```json\n" + JSON.stringify(e).replace(/"/g, "'") + "\n```";
  if (c.paths[0] === "/article") return JSON.stringify(e).replace(/}$/, ",}");
  if (c.paths[0] === "/specs") return turn === 1 ? JSON.stringify({ ...e, weight_grams: "280 g" }) : JSON.stringify(e);
  if (c.paths[0] === "/micro") return JSON.stringify({ ...e, currency: e.currency, extra: null });
  return JSON.stringify(e);
}

async function quality(site: FixtureSite) {
  const stub = startLlmStub();
  let turn = 0;
  stub.answer = (req) => {
    const user = req.messages.filter((m) => m.role === "user");
    turn = user.length;
    return { content: stubAnswer(user[0].content, turn) };
  };
  const http = createOutboundHttp({ allowPrivateTargets: true, requireHttps: false, maxBodyBytes: 6 * 1024 * 1024 });
  const compiler = new SchemaCompiler();
  const rows: string[][] = [];
  const totals = { heuristic: 0, llm: 0, total: 0 };
  try {
    for (const c of CASES) {
      const out: Record<string, { correct: number; total: number }> = {};
      for (const mode of ["heuristic", "llm"] as const) {
        const progress = { steps: 0, pages_fetched: 0, bytes_fetched: 0, tokens_in: 0, tokens_out: 0 };
        const llm = mode === "llm" ? new LlmClient(stub.url, null) : null;
        const r = await runJob(
          { schema: c.schema, description: `Extract the data of ${c.name}`, urls: c.paths.map((p) => site.url + p), maxSteps: 10, model: mode === "llm" ? "stub" : null },
          { http, llm, validate: compiler.compile(c.schema), validatePartial: compiler.compile(withoutRequired(c.schema) as JsonObject), signal: new AbortController().signal, progress },
        ).catch(() => null);
        out[mode] = score(c.expected, r?.result ?? null);
      }
      totals.heuristic += out.heuristic.correct;
      totals.llm += out.llm.correct;
      totals.total += out.heuristic.total;
      rows.push([c.name, `${out.heuristic.correct} / ${out.heuristic.total}`, `${out.llm.correct} / ${out.llm.total}`]);
    }
  } finally {
    await stub.stop();
  }
  const pct = (n: number) => `${((100 * n) / totals.total).toFixed(0)}%`;
  rows.push(["all", `${totals.heuristic} / ${totals.total} (${pct(totals.heuristic)})`, `${totals.llm} / ${totals.total} (${pct(totals.llm)})`]);
  console.log(table(["fixture", "heuristic (offline)", "LLM path, scripted stub"], rows, [false, true, true]));
}

// --- (b) pages per second -----------------------------------------------------------------------

async function pagesPerSecond(url: string, token: string, wsId: string, site: FixtureSite, jobs: number, conc: number) {
  const picks = Array.from({ length: jobs }, (_, i) => CASES[i % CASES.length]);
  const t0 = performance.now();
  const ids = await mapLimit(picks, 8, async (c) => {
    const r = await api(url, "POST", `/trawl/v1/workspaces/${wsId}/jobs`, { token, body: { json_schema: c.schema, description: `Extract ${c.name}`, suggested_urls: c.paths.map((p) => site.url + p) } });
    if (r.status !== 201) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.id as string;
  });
  for (;;) {
    const open = await Promise.all(["queued", "running"].map((s) => api(url, "GET", `/trawl/v1/workspaces/${wsId}/jobs?status=${s}&limit=1`, { token })));
    if (open.every((r) => r.body.data.length === 0)) break;
    await sleep(25);
  }
  const secs = (performance.now() - t0) / 1000;
  let pages = 0;
  let ok = 0;
  for (const id of ids) {
    const j = (await api(url, "GET", `/trawl/v1/workspaces/${wsId}/jobs/${id}`, { token })).body;
    pages += j.usage.pages_fetched;
    if (j.status === "succeeded") ok++;
  }
  // Baseline: the same pages fetched and parsed by this process, `conc` in flight.
  const urls = picks.flatMap((c) => (c.pages === 3 ? [1, 2, 3].map((n) => `${site.url}/listing?page=${n}`) : c.paths.map((p) => site.url + p)));
  const b0 = performance.now();
  await mapLimit(urls, conc, async (u) => {
    const text = await (await fetch(u)).text();
    if (!u.includes("/api/")) parseHTML(text).document.querySelectorAll("a");
  });
  const baseRate = urls.length / ((performance.now() - b0) / 1000);
  return { rate: pages / secs, pages, secs, ok, jobs, baseRate, basePages: urls.length };
}

export default async function main() {
  const ws = wrkSettings();
  const { seconds, warmup, m } = benchPrelude("trawl", 120, ws.rounds * 3);
  const jobs = Math.floor(envNumber("BENCH_TRAWL_JOBS", 100, 1));
  const conc = Math.floor(envNumber("BENCH_TRAWL_CONCURRENCY", 4, 1));
  const site = startFixtureSite();
  const bunker = await startBunker({ env: { ALLOW_PRIVATE_TARGETS: "true", TRAWL_CONCURRENCY: String(conc) } });
  const baseline = await startBaseline();
  try {
    const { session, workspaceId } = await benchOwner(bunker.url, "bench-trawl");

    console.log(`(c) extraction quality on the fixture set (fields correct / fields expected)\n`);
    await quality(site);

    console.log(`\n(b) ${jobs} offline jobs over the fixture set, TRAWL_CONCURRENCY=${conc}`);
    const b = await pagesPerSecond(bunker.url, session, workspaceId, site, jobs, conc);
    console.log(`  ${b.ok}/${b.jobs} succeeded; ${b.pages} pages in ${b.secs.toFixed(2)} s = ${fmtNum(b.rate, 1)} pages/s; baseline fetch + linkedom parse in this process: ${fmtNum(b.baseRate, 1)} pages/s (${b.basePages} pages)`);

    const create: RequestSpec = {
      method: "POST",
      path: `/trawl/v1/workspaces/${workspaceId}/jobs`,
      headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
      body: JSON.stringify({ json_schema: CASES[0].schema, description: "Extract the product name and price", suggested_urls: [`${site.url}/slow?bench=1`], timeout_s: 10 }),
    };
    console.log(`\n(a) POST /trawl/v1/workspaces/{id}/jobs under wrk; the worker holds ${conc} of them on a slow page meanwhile`);
    const res = await vsBunServe(baseline, [{ name: `create -c${ws.connections}`, baseUrl: bunker.url, spec: create, serverPid: bunker.pid }], ws, seconds, warmup);
    console.log("\n" + wrkTable(res.baseline, res.targets.map((r) => ({ result: r, what: r.name, target: null }))));
    console.log("\n" + wrkFootnote(ws, seconds, warmup, m));
    const sat = res.targets[0]!;
    const creates = median(sat.runs.map((r) => (r.completed - r.errors) / r.seconds));
    const pass = (ok: boolean) => (ok ? "PASS" : "BELOW");
    console.log(`
Speed (issue 17), ${m.cores} cores (${m.cpuModel}), bun ${m.bun}:
  (a) job creates/s (wrk -c${ws.connections}):   ${fmtNum(creates)}/s   target >= 2,000/s  ${pass(creates >= 2000)}   (${median(sat.ratios).toFixed(2)} of bare Bun.serve)
  (b) pages extracted offline:      ${fmtNum(b.rate, 1)}/s   target >= 50/s     ${pass(b.rate >= 50)}   (${(b.rate / b.baseRate).toFixed(2)} of fetch + parse in the bench process)`);
  } finally {
    await bunker.stop();
    await baseline.stop();
    await site.stop();
  }
}
