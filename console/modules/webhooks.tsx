/**
 * Webhooks of every scope: endpoints (create with the secret shown once, pause/resume,
 * rotate with a grace period, test, delete) and the event log with each attempt
 * (status, latency, response excerpt) and replay. A scope is one line in WEBHOOK_SCOPES.
 */
import { useState } from "preact/hooks";
import { api, get } from "../lib/api";
import type { ConsoleModule, ScreenProps, Workspace } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Json, Loading, PagedTable, Section, SecretOnce, Table, useLoad, when } from "../lib/ui";

export interface WebhookScope {
  id: string;
  label: string;
  /** The service that must be enabled in the workspace. */
  service: string;
  /** Scopes owned by something in the workspace (an Auth App, a community) need one picked: the base path gets its id. */
  owner?: { label: string; noun: string; list: (ws: Workspace) => string };
  base: (ws: Workspace, ownerId?: string) => string;
}

export const WEBHOOK_SCOPES: WebhookScope[] = [
  { id: "mail", label: "Mail", service: "mail", base: (ws) => `/mail/v1/workspaces/${ws.id}/webhooks` },
  { id: "waitlist", label: "Waitlist", service: "waitlist", base: (ws) => `/waitlist/v1/workspaces/${ws.id}/webhooks` },
  { id: "trawl", label: "Extraction jobs", service: "trawl", base: (ws) => `/trawl/v1/workspaces/${ws.id}/webhooks` },
  { id: "social", label: "Community (workspace)", service: "social", base: (ws) => `/social/v1/workspaces/${ws.id}/webhooks` },
  { id: "social-community", label: "Community", service: "social", owner: { label: "Community", noun: "community", list: (ws) => `/social/v1/workspaces/${ws.id}/communities?limit=100` }, base: (_ws, c) => `/social/v1/communities/${c}/webhooks` },
  { id: "auth", label: "Auth App", service: "auth", owner: { label: "App", noun: "Auth App", list: (ws) => `/auth/v1/apps?workspace_id=${ws.id}&limit=100` }, base: (_ws, app) => `/auth/v1/apps/${app}/webhooks` },
];

/** rest = [scopeId, appId?]: picks the scope (and the App) and gives the base path. */
function useScope(p: ScreenProps, screen: string) {
  const scopes = WEBHOOK_SCOPES.filter((s) => p.ws.services.includes(s.service));
  const scope = scopes.find((s) => s.id === p.rest[0]) ?? scopes[0];
  const apps = useLoad(() => (scope?.owner ? get<{ data: { id: string; display_name: string }[] }>(scope.owner.list(p.ws)) : Promise.resolve({ data: [] })), [scope?.id, p.ws.id]);
  const appId = scope?.owner ? (p.rest[1] ?? apps.data?.data[0]?.id) : undefined;
  const picker = (
    <div class="form inline picker">
      <div class="field">
        <label for="wh-scope">Scope</label>
        <select id="wh-scope" value={scope?.id} onChange={(e) => go(p.href(screen, (e.target as HTMLSelectElement).value))}>
          {scopes.map((s) => (
            <option value={s.id}>{s.label}</option>
          ))}
        </select>
      </div>
      {scope?.owner && (
        <div class="field">
          <label for="wh-app">{scope.owner.label}</label>
          <select id="wh-app" value={appId} onChange={(e) => go(p.href(screen, scope.id, (e.target as HTMLSelectElement).value))}>
            {(apps.data?.data ?? []).map((a) => (
              <option value={a.id}>{a.display_name}</option>
            ))}
          </select>
        </div>
      )}
    </div>
  );
  const base = scope && (!scope.owner || appId) ? scope.base(p.ws, appId) : null;
  const missing = !scope ? "No service with webhooks is enabled in this workspace." : scope.owner && apps.data && !appId ? `This workspace has no ${scope.owner.noun} yet.` : null;
  return { base, picker, missing, loading: scope?.owner && !apps.data };
}

function Endpoints(p: ScreenProps) {
  const { base, picker, missing, loading } = useScope(p, "endpoints");
  const [tick, setTick] = useState(0);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [testResult, setTestResult] = useState<any>(null);
  const types = useLoad(() => (base ? get<{ data: { type: string; description: string }[] }>(`${base}/event-types`) : Promise.resolve({ data: [] })), [base]);
  if (missing) return <>{picker}<p class="muted">{missing}</p></>;
  if (loading || !base) return <Loading />;
  const refresh = () => setTick((t) => t + 1);
  return (
    <>
      {picker}
      <Section title="Add an endpoint">
        {secret ? (
          <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />
        ) : (
          <Form
            key={base}
            id="create-endpoint"
            submitLabel="Add endpoint"
            resetOnSuccess
            fields={[
              { name: "url", label: "URL", type: "url", required: true, placeholder: "https://example.com/webhooks" },
              { name: "description", label: "Description" },
              { name: "event_types", label: "Event types", hint: `Comma-separated; empty for all. Known: ${(types.data?.data ?? []).map((t) => t.type).join(", ")}` },
            ]}
            onSubmit={async (v) => {
              const event_types = String(v.event_types ?? "").split(",").map((s) => s.trim()).filter(Boolean);
              const e = await api<{ signing_secret: string }>("POST", `${base}/endpoints`, { url: v.url, description: v.description, ...(event_types.length ? { event_types } : {}) });
              setSecret({ label: "Signing secret", value: e.signing_secret });
              refresh();
            }}
          />
        )}
      </Section>
      <Section title="Endpoints">
        <PagedTable
          label="Endpoints"
          path={`${base}/endpoints`}
          reloadKey={tick}
          columns={[
            { label: "URL", cell: (e: any) => <code class="clip">{e.url}</code> },
            { label: "Events", cell: (e: any) => (e.event_types?.length ? e.event_types.join(", ") : "all") },
            { label: "State", cell: (e: any) => (e.status === "auto_disabled" ? <Badge text="auto-disabled" tone="bad" /> : e.enabled ? <Badge text="enabled" tone="ok" /> : <Badge text="paused" tone="warn" />) },
            { label: "Secret", cell: (e: any) => <code>{e.signing_secret_hint}</code> },
            {
              label: "",
              cell: (e: any) => (
                <span class="row-actions">
                  <ActionButton label={e.enabled ? "Pause" : "Resume"} run={async () => (await api("PATCH", `${base}/endpoints/${e.id}`, { enabled: !e.enabled }), refresh())} />
                  <ActionButton label="Send test" run={async () => setTestResult(await api("POST", `${base}/endpoints/${e.id}/test`, {}))} />
                  <ActionButton
                    label="Rotate secret"
                    run={async () => {
                      const r = await api<{ signing_secret: string; previous_secret_expires_at: string }>("POST", `${base}/endpoints/${e.id}/rotate-secret`, { grace_hours: 24 });
                      setSecret({ label: `New signing secret (the old one works until ${when(r.previous_secret_expires_at)})`, value: r.signing_secret });
                      refresh();
                    }}
                  />
                  <ConfirmButton label="Delete" onConfirm={async () => (await api("DELETE", `${base}/endpoints/${e.id}`), refresh())} />
                </span>
              ),
            },
          ]}
        />
      </Section>
      {testResult && (
        <Section title="Test delivery" actions={<button type="button" class="secondary small" onClick={() => setTestResult(null)}>Close</button>}>
          <Attempt a={testResult} />
        </Section>
      )}
    </>
  );
}

function Attempt({ a }: { a: any }) {
  return (
    <dl class="facts" data-testid="attempt">
      <dt>Result</dt>
      <dd>{a.succeeded === false || (a.status_code ?? 0) >= 300 || a.error_class ? <Badge text={a.error_class ?? `HTTP ${a.status_code}`} tone="bad" /> : <Badge text={`HTTP ${a.status_code}`} tone="ok" />}</dd>
      <dt>Latency</dt>
      <dd>{a.latency_ms} ms</dd>
      <dt>Response</dt>
      <dd>
        <pre class="json">{a.response_body ?? "—"}</pre>
      </dd>
    </dl>
  );
}

function Events(p: ScreenProps) {
  const { base, picker, missing, loading } = useScope(p, "events");
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  const [open, setOpen] = useState<string | null>(null);
  if (missing) return <>{picker}<p class="muted">{missing}</p></>;
  if (loading || !base) return <Loading />;
  return (
    <>
      {picker}
      <Section title="Filters">
        <Form
          key={base}
          id="event-filters"
          inline
          submitLabel="Apply"
          fields={[
            { name: "type", label: "Type" },
            { name: "status", label: "Delivery", type: "select", options: ["", "pending", "delivered", "failed"].map((s) => ({ value: s, label: s || "any" })) },
          ]}
          onSubmit={async (v) => setFilters({ type: v.type as string, status: v.status as string })}
        />
      </Section>
      <Section title="Events (last 30 days)">
        <PagedTable
          label="Events"
          path={`${base}/events`}
          query={filters}
          onRow={(e: any) => setOpen(e.id)}
          columns={[
            { label: "When", cell: (e: any) => when(e.created_at) },
            { label: "Type", cell: (e: any) => <code>{e.type}</code> },
            { label: "Deliveries", cell: (e: any) => e.deliveries.map((d: any) => <Badge text={`${d.status} (${d.attempts})`} tone={d.status === "delivered" ? "ok" : d.status === "failed" ? "bad" : "warn"} />) },
            { label: "Test", cell: (e: any) => (e.is_test ? "test" : "") },
          ]}
        />
      </Section>
      {open && <EventDetail base={base} id={open} onClose={() => setOpen(null)} />}
    </>
  );
}

function EventDetail({ base, id, onClose }: { base: string; id: string; onClose: () => void }) {
  const { data, error, reload } = useLoad(() => get(`${base}/events/${id}`), [base, id]);
  const [replayed, setReplayed] = useState<any[] | null>(null);
  return (
    <Section title="Event" actions={<button type="button" class="secondary small" onClick={onClose}>Close</button>}>
      <ErrorNote error={error} />
      {!data ? (
        <Loading />
      ) : (
        <>
          <p>
            <code>{data.type}</code> · {when(data.created_at)}{" "}
            <ActionButton
              label="Replay"
              kind="primary"
              run={async () => {
                setReplayed((await api<{ data: any[] }>("POST", `${base}/events/${id}/replay`)).data);
                reload();
              }}
            />
          </p>
          {replayed && (
            <div class="notice" role="status">
              Replayed to {replayed.length} endpoint(s): {replayed.map((r) => (r.succeeded ? `HTTP ${r.status_code}` : (r.error_class ?? `HTTP ${r.status_code}`))).join(", ")}
            </div>
          )}
          <h3>Attempts</h3>
          <Table
            label="Attempts"
            rows={data.attempts}
            empty="No attempt yet."
            columns={[
              { label: "#", cell: (a: any) => a.attempt_number },
              { label: "Trigger", cell: (a: any) => a.trigger },
              { label: "Status", cell: (a: any) => (a.status_code ? <Badge text={String(a.status_code)} tone={a.status_code < 300 ? "ok" : "bad"} /> : <Badge text={a.error_class ?? "error"} tone="bad" />) },
              { label: "Latency", cell: (a: any) => `${a.latency_ms} ms` },
              { label: "When", cell: (a: any) => when(a.created_at) },
              { label: "Response", cell: (a: any) => <code class="clip">{a.response_body ?? ""}</code> },
            ]}
          />
          <h3>Payload</h3>
          <Json value={data.payload} />
        </>
      )}
    </Section>
  );
}

export const webhooksModule: ConsoleModule = {
  id: "webhooks",
  title: "Webhooks",
  scope: "workspace",
  screens: [
    { id: "endpoints", title: "Endpoints", view: Endpoints },
    { id: "events", title: "Event log", view: Events },
  ],
};
