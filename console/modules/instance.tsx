/** Instance: version, health and readiness, key metrics as small charts, accounts (operators: status, MFA reset). */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, apiHref, type Get } from "../lib/api";
import { Chart } from "../lib/chart";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Loading, PagedTable, Section, useLoad, when } from "../lib/ui";

/** Prometheus text -> metric name -> summed value, keeping label filters as a predicate. */
export function sumMetric(text: string, name: string, match: (labels: string) => boolean = () => true): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})?\s+([-+0-9.eE]+|NaN)/.exec(line);
    if (!m || m[1] !== name || !match(m[2] ?? "")) continue;
    const v = Number(m[3]);
    if (Number.isFinite(v)) total += v;
  }
  return total;
}

interface Sample {
  t: number;
  requests: number;
  errors: number;
  backlog: number;
  mailQueue: number;
  jobErrors: number;
  memory: number;
}

const MAX_SAMPLES = 120;

function Overview(p: ScreenProps) {
  const health = useLoad(() => api.get("/healthz"), []);
  const [ready, setReady] = useState<Get<"/readyz"> | null>(null);
  const [samples, setSamples] = useState<Sample[]>([]);
  const [metricsError, setMetricsError] = useState<Error | null>(null);
  const token = useRef<string | null>(null); // METRICS_TOKEN, in memory only
  const [needsToken, setNeedsToken] = useState(false);

  const poll = async () => {
    // Plain fetch: /readyz answers its body with a 503 too, and /metrics takes METRICS_TOKEN, not the session.
    fetch(apiHref("/readyz")).then(async (r) => setReady((await r.json()) as Get<"/readyz">)).catch(() => setReady(null));
    const res = await fetch(apiHref("/metrics"), token.current ? { headers: { authorization: `Bearer ${token.current}` } } : {});
    if (res.status === 401) {
      setNeedsToken(true);
      return;
    }
    if (!res.ok) return setMetricsError(new Error(`/metrics answered ${res.status}`));
    setNeedsToken(false);
    const text = await res.text();
    const s: Sample = {
      t: Date.now() / 1000,
      requests: sumMetric(text, "bunker_http_requests_total"),
      errors: sumMetric(text, "bunker_http_requests_total", (l) => /status="5\d\d"/.test(l)),
      backlog: sumMetric(text, "bunker_webhook_backlog"),
      mailQueue: sumMetric(text, "bunker_system_mail_queued"),
      jobErrors: sumMetric(text, "bunker_job_runs_total", (l) => /outcome="error"/.test(l)),
      memory: sumMetric(text, "bunker_process_resident_memory_bytes") / 1024 / 1024,
    };
    setSamples((prev) => [...prev.slice(-(MAX_SAMPLES - 1)), s]);
  };
  useEffect(() => {
    void poll();
    const soon = setTimeout(() => void poll(), 1000); // a second sample at once: the charts need two
    const id = setInterval(() => void poll(), 5000);
    return () => {
      clearTimeout(soon);
      clearInterval(id);
    };
  }, []);

  const x = samples.slice(1).map((s) => s.t);
  const delta = (k: keyof Sample) => samples.slice(1).map((s, i) => Math.max(0, s[k] - samples[i]![k]));
  const level = (k: keyof Sample) => samples.slice(1).map((s) => s[k]);
  const last = samples[samples.length - 1];
  return (
    <>
      <Section title="Instance">
        {health.error && <ErrorNote error={health.error} />}
        <dl class="facts">
          <dt>Version</dt>
          <dd data-testid="version">{health.data?.version ?? "…"}</dd>
          <dt>Health</dt>
          <dd>{health.data ? <Badge text={health.data.status} tone="ok" /> : "…"}</dd>
          <dt>Readiness</dt>
          <dd data-testid="readiness">
            {ready ? <Badge text={ready.status} tone={ready.status === "ready" ? "ok" : "bad"} /> : "…"}
            {ready && (
              <span class="muted">
                {" "}
                database {ready.checks?.db ? "up" : "down"}, scheduler {ready.checks?.scheduler ? "running" : "stopped"}
              </span>
            )}
          </dd>
          {last && (
            <>
              <dt>Requests served</dt>
              <dd>{last.requests}</dd>
              <dt>Memory</dt>
              <dd>{last.memory.toFixed(0)} MiB</dd>
            </>
          )}
        </dl>
        <p class="muted">
          Backups: run <code>bunker backup &lt;dir&gt;</code> on the server (online, consistent while it serves; with the objects and, if asked, the key).
          {p.me.account?.is_operator && " Or download a snapshot of the database (SQLite only; on PostgreSQL use pg_dump): "}
        </p>
        {p.me.account?.is_operator && (
          <a class="button-link" href={apiHref("/platform/v1/admin/backup")} download>
            Download backup
          </a>
        )}
      </Section>
      <Section title="Metrics (sampled every 5 s while this page is open)">
        <ErrorNote error={metricsError} />
        {needsToken && (
          <Form
            id="metrics-token"
            submitLabel="Read metrics"
            fields={[{ name: "token", label: "METRICS_TOKEN", type: "password", hint: "This server protects /metrics; the token stays in this page's memory." }]}
            onSubmit={async (v) => {
              token.current = String(v.token ?? "");
              await poll();
            }}
          />
        )}
        {x.length < 1 ? (
          <Loading what="Collecting samples" />
        ) : (
          <div class="charts">
            <Chart title="Requests / 5 s" x={x} series={[{ label: "requests", values: delta("requests") }, { label: "5xx", values: delta("errors") }]} />
            <Chart title="Webhook backlog" x={x} series={[{ label: "backlog", values: level("backlog") }]} />
            <Chart title="System mail queue" x={x} series={[{ label: "queued", values: level("mailQueue") }]} />
            <Chart title="Failed job runs / 5 s" x={x} series={[{ label: "errors", values: delta("jobErrors") }]} />
          </div>
        )}
      </Section>
    </>
  );
}

function Accounts(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  if (!p.me.account?.is_operator) return <ErrorNote error={new ApiError(403, "FORBIDDEN", "Only operators manage accounts.")} />;
  const verb = (a: { id: string }, v: "suspend" | "reactivate") => <ActionButton label={v[0]!.toUpperCase() + v.slice(1)} run={async () => (await api.post("/platform/v1/admin/accounts/{account_id}/{verb}", { path: { account_id: a.id, verb: v } }), setTick(tick + 1))} />;
  return (
    <Section title="Accounts">
      <PagedTable
        label="Accounts"
        path="/platform/v1/admin/accounts"
        reloadKey={tick}
        columns={[
          { label: "Username", cell: (a) => a.username },
          { label: "Email", cell: (a) => a.email },
          { label: "Status", cell: (a) => <Badge text={a.status} tone={a.status === "active" ? "ok" : "bad"} /> },
          { label: "Operator", cell: (a) => (a.is_operator ? "yes" : "") },
          { label: "Created", cell: (a) => when(a.created_at) },
          { label: "", cell: (a) => (a.id === p.me.account?.id ? null : a.status === "active" ? verb(a, "suspend") : verb(a, "reactivate")) },
          // For an account locked out of its authenticator: it signs in with the password only, then enrols again.
          { label: "MFA", cell: (a) => (a.id === p.me.account?.id ? null : <ConfirmButton label="Reset MFA" onConfirm={async () => (await api.delete("/platform/v1/admin/accounts/{account_id}/mfa", { path: { account_id: a.id } }), setTick(tick + 1))} />) },
        ]}
      />
    </Section>
  );
}

export const instanceModule: ConsoleModule = {
  id: "instance",
  title: "Instance",
  scope: "instance",
  screens: [
    { id: "overview", title: "Health & metrics", view: Overview },
    { id: "accounts", title: "Accounts", view: Accounts },
  ],
};
