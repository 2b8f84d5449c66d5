/**
 * Extraction jobs: the job list with status (refreshed while jobs run), creating a job (JSON
 * Schema editor: parse errors at once, the API's validation details next to their field),
 * the job detail with progress, result, pages read and error, cancel; usage and the monthly
 * credit limit.
 */
import { useEffect, useState } from "preact/hooks";
import { api, type BodyOf } from "../lib/api";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { Badge, ConfirmButton, ErrorNote, Form, Json, Loading, PagedTable, Section, Table, useLoad, when } from "../lib/ui";

/** The path parameter of the workspace's extraction routes. */
const base = (p: ScreenProps) => ({ workspace_id: p.ws.id });
/** A page in a job's result_meta.pages (free-form metadata of the extractor). */
interface ReadPage {
  url: string;
  status?: number | null;
  extracted?: boolean;
}
const FINAL = ["succeeded", "failed", "cancelled"];
const tone = (s: string) => (s === "succeeded" ? "ok" : s === "failed" ? "bad" : s === "cancelled" ? "warn" : "info");
const SAMPLE_SCHEMA = { type: "object", properties: { name: { type: "string" }, price: { type: "number" } }, required: ["name", "price"] };

/** Calls fn every `ms` while `on` holds (jobs in flight). */
function usePoll(on: boolean, ms: number, fn: () => void) {
  useEffect(() => {
    if (!on) return;
    const t = setInterval(fn, ms);
    return () => clearInterval(t);
  }, [on, ms]);
}

function Jobs(p: ScreenProps) {
  const [status, setStatus] = useState("");
  const [tick, setTick] = useState(0);
  // The list refreshes itself every 2 s while shown (jobs move on their own).
  usePoll(!p.rest[0], 2000, () => setTick((t) => t + 1));
  if (p.rest[0]) return <JobDetail p={p} id={p.rest[0]} />;
  return (
    <>
      <p>
        <a class="button-link" href={p.href("new")}>
          New job
        </a>
      </p>
      <Section
        title="Jobs"
        actions={
          <select aria-label="Filter by status" value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
            {["", "queued", "running", "succeeded", "failed", "cancelled"].map((s) => (
              <option value={s}>{s || "any status"}</option>
            ))}
          </select>
        }
      >
        <PagedTable
          label="Jobs"
          path="/trawl/v1/workspaces/{workspace_id}/jobs" params={base(p)}
          query={{ status: status || undefined }}
          reloadKey={tick}
          empty="No job yet."
          onRow={(j) => go(p.href("jobs", j.id))}
          columns={[
            { label: "Job", cell: (j) => <a href={p.href("jobs", j.id)}>{j.description}</a> },
            { label: "Status", cell: (j) => <Badge text={j.status} tone={tone(j.status)} /> },
            { label: "Pages", cell: (j) => `${j.usage.pages_fetched} / ${j.max_steps}` },
            { label: "Error", cell: (j) => j.error_code ?? "" },
            { label: "Queued", cell: (j) => when(j.enqueued_at) },
          ]}
        />
      </Section>
    </>
  );
}

function JobDetail({ p, id }: { p: ScreenProps; id: string }) {
  const path = { ...base(p), id };
  const job = useLoad(() => api.get("/trawl/v1/workspaces/{workspace_id}/jobs/{id}", { path }), [p.ws.id, id]);
  const j = job.data;
  usePoll(!!j && !FINAL.includes(j.status), 1000, job.reload);
  if (job.error) return <ErrorNote error={job.error} />;
  if (!j) return <Loading />;
  const meta: Record<string, unknown> = j.result_meta ?? {};
  return (
    <>
      <p>
        <a href={p.href("jobs")}>← All jobs</a>
      </p>
      <Section title={j.description} actions={<Badge text={j.status} tone={tone(j.status)} />}>
        {!FINAL.includes(j.status) && (
          <p role="status" aria-busy="true">
            <span class="spinner" /> {j.status === "queued" ? "Waiting for a worker" : "Running"}: {j.usage.pages_fetched} of at most {j.max_steps} pages read.{" "}
            <progress max={j.max_steps} value={j.usage.pages_fetched} />
          </p>
        )}
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{j.id}</code>
          </dd>
          <dt>Seed URLs</dt>
          <dd>{j.suggested_urls.length ? j.suggested_urls.map((u) => <code class="clip">{u} </code>) : "none"}</dd>
          <dt>Limits</dt>
          <dd>
            {j.max_steps} pages, {j.timeout_s} s, model {j.model_tier}
          </dd>
          <dt>Attempts</dt>
          <dd>{j.attempts}</dd>
          <dt>Usage</dt>
          <dd>
            {j.usage.steps} steps, {j.usage.pages_fetched} pages, {j.usage.bytes} bytes, {j.usage.llm_tokens_in + j.usage.llm_tokens_out} LLM tokens
          </dd>
          <dt>Queued / started / ended</dt>
          <dd>
            {when(j.enqueued_at)} / {when(j.started_at)} / {when(j.completed_at)}
          </dd>
        </dl>
        {!FINAL.includes(j.status) && <ConfirmButton label="Cancel job" onConfirm={async () => (await api.post("/trawl/v1/workspaces/{workspace_id}/jobs/{id}/cancel", { path }), job.reload())} />}
      </Section>
      {j.status === "failed" && (
        <Section title="Error">
          <p class="error" data-testid="job-error">
            <Badge text={j.error_code ?? "failed"} tone="bad" /> {j.error}
          </p>
        </Section>
      )}
      {j.result && (
        <Section title="Result">
          <div data-testid="job-result">
            <Json value={j.result} />
          </div>
        </Section>
      )}
      {Array.isArray(meta.pages) && meta.pages.length > 0 && (
        <Section title="Pages read">
          <p class="muted">
            Extractor {String(meta.extractor ?? "—")}
            {meta.model ? `, model ${meta.model}` : ""}
            {meta.stopped_by ? `, stopped by ${meta.stopped_by}` : ""}
          </p>
          <Table
            label="Pages read"
            rows={meta.pages as ReadPage[]}
            columns={[
              { label: "URL", cell: (pg) => <code class="clip">{pg.url}</code> },
              { label: "Status", cell: (pg) => String(pg.status ?? "") },
              { label: "Used", cell: (pg) => (pg.extracted ? "yes" : "no") },
            ]}
          />
          {Array.isArray(meta.warnings) && meta.warnings.length > 0 && (
            <ul class="findings">
              {(meta.warnings as string[]).map((w) => (
                <li>{typeof w === "string" ? w : JSON.stringify(w)}</li>
              ))}
            </ul>
          )}
        </Section>
      )}
      <Section title="Schema">
        <Json value={j.json_schema} />
      </Section>
    </>
  );
}

function NewJob(p: ScreenProps) {
  return (
    <Section title="New extraction job">
      <Form
        id="new-job"
        submitLabel="Create job"
        fields={[
          { name: "description", label: "What to extract", type: "textarea", rows: 2, required: true },
          { name: "json_schema", label: "JSON Schema of the result", type: "json", rows: 12, initial: SAMPLE_SCHEMA, hint: "Draft 2020-12 (or draft-07 with $schema), root type object, local $ref only, at most 64 KB." },
          { name: "suggested_urls", label: "Seed URLs (one per line)", type: "textarea", rows: 3 },
          { name: "max_steps", label: "Maximum pages", type: "number", placeholder: "default" },
          { name: "timeout_s", label: "Timeout (seconds)", type: "number", placeholder: "default" },
          { name: "model_tier", label: "Model", type: "select", options: [{ value: "standard", label: "standard" }, { value: "pro", label: "pro" }] },
        ]}
        onSubmit={async (v) => {
          const urls = String(v.suggested_urls ?? "").split("\n").map((u) => u.trim()).filter(Boolean);
          const j = await api.post("/trawl/v1/workspaces/{workspace_id}/jobs", { path: base(p), body: { ...v, description: v.description ?? "", json_schema: v.json_schema ?? {}, suggested_urls: urls } as BodyOf<"post", "/trawl/v1/workspaces/{workspace_id}/jobs"> });
          go(p.href("jobs", j.id));
        }}
      />
    </Section>
  );
}

function Usage(p: ScreenProps) {
  const usage = useLoad(() => api.get("/trawl/v1/workspaces/{workspace_id}/usage", { path: base(p) }), [p.ws.id]);
  const settings = useLoad(() => api.get("/trawl/v1/workspaces/{workspace_id}/extraction-settings", { path: base(p) }), [p.ws.id]);
  const u = usage.data;
  return (
    <>
      <Section title={`Usage ${u?.month ?? ""}`}>
        <ErrorNote error={usage.error} />
        {u ? (
          <dl class="facts" data-testid="usage">
            <dt>Jobs ended</dt>
            <dd>{u.jobs}</dd>
            <dt>Pages fetched</dt>
            <dd>{u.pages_fetched}</dd>
            <dt>Bytes</dt>
            <dd>{u.bytes}</dd>
            <dt>LLM tokens</dt>
            <dd>
              {u.llm_tokens_in} in, {u.llm_tokens_out} out
            </dd>
            <dt>Credits used</dt>
            <dd>
              {u.credits_used}
              {u.monthly_credit_limit !== null ? ` of ${u.monthly_credit_limit}` : " (no limit)"}
            </dd>
          </dl>
        ) : (
          <Loading />
        )}
      </Section>
      <Section title="Monthly credit limit">
        <ErrorNote error={settings.error} />
        {settings.data && (
          <Form
            key={settings.data.updated_at ?? "none"}
            id="credit-limit"
            inline
            submitLabel="Save limit"
            fields={[{ name: "monthly_credit_limit", label: "Credits per month (empty: no limit)", type: "number", initial: settings.data.monthly_credit_limit ?? "" }]}
            onSubmit={async (v) => (await api.put("/trawl/v1/workspaces/{workspace_id}/extraction-settings", { path: base(p), body: { monthly_credit_limit: (v.monthly_credit_limit as number | undefined) ?? null } }), settings.reload(), usage.reload())}
          />
        )}
      </Section>
    </>
  );
}

export const trawlModule: ConsoleModule = {
  id: "extraction",
  title: "Extraction",
  scope: "workspace",
  service: "trawl",
  screens: [
    { id: "jobs", title: "Jobs", view: Jobs },
    { id: "new", title: "New job", view: NewJob },
    { id: "usage", title: "Usage", view: Usage },
  ],
};
