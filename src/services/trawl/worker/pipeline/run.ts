/**
 * One attempt of one job: read pages (suggested URLs first, then pagination and links that
 * match the description, within max_steps and the suggested URLs' origins), extract from
 * each (the LLM when LLM_BASE_URL is set, else the heuristic extractor), merge, and check
 * the merged result against the job's schema.
 *
 * Links: pagination links (rel=next, "next" anchors) are always followed; links whose text
 * or path shares words with the description only while a required property is still empty.
 * Outcome: a job succeeds only on pages it read. When no page could be read at all it fails
 * with the fetch error, whatever the schema (an empty result can satisfy a schema without
 * required properties): BLOCKED_BY_SSRF_GUARD when every page was refused by the guard, else
 * FETCH_FAILED (HTTP error, DNS, connection, robots.txt...), naming the URL and the reason; no
 * URL at all is SCHEMA_UNSATISFIED. Otherwise a result that validates succeeds (stopped_by
 * "done", or "max_steps" with pages left unread); else STEP_LIMIT when pages were left
 * unread, or SCHEMA_UNSATISFIED when every reachable page was read (naming the empty
 * required properties).
 */
import type { ValidateFunction } from "ajv";
import { describeErrors, missingRequired, type JsonObject } from "../../schema";
import { FetchError, PageFetcher, type FetchMeter } from "./fetch";
import { candidatesFromHtml, candidatesFromJson } from "./heuristic";
import { mapToSchema } from "./map";
import { chunk, findLinks, keywords, parseDocument, toMarkdown } from "./html";
import { LlmError, type LlmClient, type Tokens } from "./llm";
import { merge } from "./merge";
import type { OutboundHttp } from "../../../../core/outbound-http";

export type ErrorCode = "FETCH_FAILED" | "BLOCKED_BY_SSRF_GUARD" | "TIMEOUT" | "SCHEMA_UNSATISFIED" | "LLM_ERROR" | "STEP_LIMIT" | "WORKER_LOST";

export class JobError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    public meta: JsonObject | null = null,
  ) {
    super(message);
  }
}

export interface JobSpec {
  schema: JsonObject;
  description: string;
  urls: string[];
  maxSteps: number;
  model: string | null;
}

export interface Progress extends Tokens {
  steps: number;
  pages_fetched: number;
  bytes_fetched: number;
}

export interface RunEnv {
  http: Pick<OutboundHttp, "request">;
  llm: LlmClient | null;
  validate: ValidateFunction;
  validatePartial: ValidateFunction;
  signal: AbortSignal;
  progress: Progress;
}

export interface PageMeta {
  url: string;
  status: number | null;
  extracted: boolean;
  error?: string;
}

export interface RunResult {
  result: JsonObject;
  meta: JsonObject;
}

export async function runJob(job: JobSpec, env: RunEnv): Promise<RunResult> {
  const { progress, signal } = env;
  const meter: FetchMeter = { bytes: 0 };
  const fetcher = new PageFetcher(env.http, meter, signal);
  const origins = new Set(job.urls.map((u) => new URL(u).origin));
  const words = keywords(job.description);
  const queue = [...job.urls];
  const queued = new Set(queue);
  const pages: PageMeta[] = [];
  const warnings: string[] = [];
  const sources: Record<string, string> = {};
  let repaired = false;
  let merged: JsonObject = {};
  const errors: FetchError[] = [];
  let read = 0;

  const enqueue = (urls: string[]) => {
    for (const u of urls) {
      if (queued.has(u)) continue;
      queued.add(u);
      queue.push(u);
    }
  };

  const meta = (stoppedBy: string): JsonObject => ({
    extractor: env.llm && job.model ? "llm" : "heuristic",
    ...(env.llm && job.model ? { model: job.model, repaired_json: repaired } : { sources }),
    pages,
    warnings,
    stopped_by: stoppedBy,
  });

  while (queue.length && progress.steps < job.maxSteps) {
    if (signal.aborted) throw signal.reason;
    const url = queue.shift()!;
    progress.steps++;
    let page;
    try {
      page = await fetcher.fetch(url);
    } catch (e) {
      progress.bytes_fetched = meter.bytes;
      if (!(e instanceof FetchError)) throw e;
      errors.push(e);
      pages.push({ url, status: null, extracted: false, error: `${e.code}: ${e.message}` });
      continue;
    } finally {
      progress.bytes_fetched = meter.bytes;
    }
    progress.pages_fetched++;
    read++;
    if (page.finalUrl !== url) queued.add(page.finalUrl);

    let value: JsonObject = {};
    let doc = null;
    if (page.kind === "html") doc = parseDocument(page.text);
    if (env.llm && job.model) {
      const content = page.kind === "html" ? markdownOf(page.text, doc) : page.text;
      const { chunks, dropped } = chunk(content);
      if (dropped) warnings.push(`${page.finalUrl}: page longer than the chunks sent to the model; the rest was not read`);
      for (let i = 0; i < chunks.length; i++) {
        try {
          const r = await env.llm.extract(
            { model: job.model, schema: job.schema, description: job.description, url: page.finalUrl, part: `part ${i + 1}/${chunks.length}`, markdown: chunks[i], validate: env.validatePartial },
            signal,
            progress,
            warnings,
          );
          if (r) {
            value = merge(value, r.value);
            repaired ||= r.repaired;
          }
        } catch (e) {
          if (e instanceof LlmError) throw new JobError("LLM_ERROR", e.message, meta("error"));
          throw e;
        }
      }
    } else {
      const cands = page.kind === "html" ? candidatesFromHtml(doc) : page.kind === "json" ? candidatesFromJson(page.text) : null;
      if (cands) {
        const mapped = mapToSchema(job.schema, cands);
        value = mapped.value;
        for (const [k, s] of Object.entries(mapped.sources)) if (!(k in sources)) sources[k] = `${s} (${page.finalUrl})`;
      }
    }
    const extracted = Object.keys(value).length > 0;
    pages.push({ url: page.finalUrl, status: page.status, extracted });
    merged = merge(merged, value);

    if (doc) {
      const links = findLinks(doc, page.finalUrl, origins, words);
      enqueue(links.pagination);
      if (missingRequired(job.schema, merged).length) enqueue(links.relevant);
    }
  }

  if (read === 0) throw nothingRead(errors, meta("error"));
  const left = queue.length > 0;
  if (env.validate(merged)) return { result: merged, meta: meta(left ? "max_steps" : "done") };
  const missing = missingRequired(job.schema, merged);
  const why = missing.length ? `required properties stayed empty: ${missing.join(", ")}` : `the result does not match the schema: ${describeErrors(env.validate.errors).join("; ")}`;
  if (left) throw new JobError("STEP_LIMIT", `stopped after max_steps (${job.maxSteps}) pages with pages left to read; ${why}`, meta("max_steps"));
  throw new JobError("SCHEMA_UNSATISFIED", why, meta("done"));
}

/** The failure of a job that read no page: the first URL's reason for the code, and how many others failed. */
function nothingRead(errors: FetchError[], meta: JsonObject): JobError {
  if (!errors.length) return new JobError("SCHEMA_UNSATISFIED", "the job has no suggested_urls to read", meta);
  const code = errors.every((e) => e.code === "BLOCKED_BY_SSRF_GUARD") ? "BLOCKED_BY_SSRF_GUARD" : "FETCH_FAILED";
  const first = errors.find((e) => e.code === code)!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more unreadable page${errors.length > 2 ? "s" : ""}: see result_meta.pages)` : "";
  return new JobError(code, `no page could be read: ${first.message}${more}`, meta);
}

/** Markdown of an HTML page; its plain text if the conversion fails on odd markup. */
function markdownOf(html: string, doc: { body?: { textContent?: string | null } | null } | null): string {
  try {
    return toMarkdown(html).markdown;
  } catch {
    return String(doc?.body?.textContent ?? "").replace(/\s+/g, " ").trim();
  }
}
