/**
 * Webhooks of every scope: endpoints (create with the secret shown once, pause/resume,
 * rotate with a grace period, test, delete) and the event log with each attempt
 * (status, latency, response excerpt) and replay. A scope is one line in WEBHOOK_SCOPES.
 */
import { useState } from "preact/hooks";
import { api, url, type AnswerOf } from "../lib/api";
import type { ConsoleModule, ScreenProps, Workspace } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Json, Loading, PagedTable, Section, SecretOnce, Table, useLoad, when } from "../lib/ui";

export interface WebhookScope {
  id: string;
  label: string;
  /** The service that must be enabled in the workspace. */
  service: string;
  /** Scopes owned by something in the workspace (an Auth App, a community) need one picked: the routes' parameter is its id. */
  owner?: { label: string; noun: string; list: (ws: Workspace) => Promise<{ data: { id: string; display_name: string }[] }> };
  base: (ws: Workspace, ownerId?: string) => WebhookAt;
}

/** Every product's webhook routes are the one engine's, under the product's root. */
type WebhookRoot =
  | "/mail/v1/workspaces/{workspace_id}/webhooks"
  | "/waitlist/v1/workspaces/{workspace_id}/webhooks"
  | "/trawl/v1/workspaces/{workspace_id}/webhooks"
  | "/social/v1/workspaces/{workspace_id}/webhooks"
  | "/social/v1/communities/{community_id}/webhooks"
  | "/auth/v1/apps/{app_id}/webhooks";
/** A scope's routes: the root template and its parameters. */
export interface WebhookAt {
  root: WebhookRoot;
  path: { workspace_id: string } | { community_id: string } | { app_id: string };
}
const inWorkspace = (root: WebhookRoot) => (ws: Workspace): WebhookAt => ({ root, path: { workspace_id: ws.id } });
/** One string per scope and owner, for keys and reload dependencies. */
const keyOf = (at: WebhookAt) => url(at.root, { path: at.path });
/** The secret is null only on an Idempotency-Key replay, and the console sends no Idempotency-Key. */
const shownOnce = (secret: string | null) => secret as string;
type Attempt = AnswerOf<"post", "/mail/v1/workspaces/{workspace_id}/webhooks/endpoints/{id}/test">;

export const WEBHOOK_SCOPES: WebhookScope[] = [
  { id: "mail", label: "Mail", service: "mail", base: inWorkspace("/mail/v1/workspaces/{workspace_id}/webhooks") },
  { id: "waitlist", label: "Waitlist", service: "waitlist", base: inWorkspace("/waitlist/v1/workspaces/{workspace_id}/webhooks") },
  { id: "trawl", label: "Extraction jobs", service: "trawl", base: inWorkspace("/trawl/v1/workspaces/{workspace_id}/webhooks") },
  { id: "social", label: "Community (workspace)", service: "social", base: inWorkspace("/social/v1/workspaces/{workspace_id}/webhooks") },
  {
    id: "social-community",
    label: "Community",
    service: "social",
    owner: { label: "Community", noun: "community", list: (ws) => api.get("/social/v1/workspaces/{workspace_id}/communities", { path: { workspace_id: ws.id }, query: { limit: 100 } }) },
    base: (_ws, c) => ({ root: "/social/v1/communities/{community_id}/webhooks", path: { community_id: c! } }),
  },
  {
    id: "auth",
    label: "Auth App",
    service: "auth",
    owner: { label: "App", noun: "Auth App", list: (ws) => api.get("/auth/v1/apps", { query: { workspace_id: ws.id, limit: 100 } }) },
    base: (_ws, app) => ({ root: "/auth/v1/apps/{app_id}/webhooks", path: { app_id: app! } }),
  },
];

/** rest = [scopeId, appId?]: picks the scope (and the App) and gives the base path. */
function useScope(p: ScreenProps, screen: string) {
  const scopes = WEBHOOK_SCOPES.filter((s) => p.ws.services.includes(s.service));
  const scope = scopes.find((s) => s.id === p.rest[0]) ?? scopes[0];
  const apps = useLoad(() => (scope?.owner ? scope.owner.list(p.ws) : Promise.resolve({ data: [] })), [scope?.id, p.ws.id]);
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
  const [testResult, setTestResult] = useState<Attempt | null>(null);
  const types = useLoad(() => (base ? api.get(`${base.root}/event-types`, { path: base.path }) : Promise.resolve({ data: [] })), [base && keyOf(base)]);
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
            key={keyOf(base)}
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
              const e = await api.post(`${base.root}/endpoints`, { path: base.path, body: { url: v.url as string, description: v.description as string | undefined, ...(event_types.length ? { event_types } : {}) } });
              setSecret({ label: "Signing secret", value: shownOnce(e.signing_secret) });
              refresh();
            }}
          />
        )}
      </Section>
      <Section title="Endpoints">
        <PagedTable
          label="Endpoints"
          path={`${base.root}/endpoints`}
          params={base.path}
          reloadKey={tick}
          columns={[
            { label: "URL", cell: (e) => <code class="clip">{e.url}</code> },
            { label: "Events", cell: (e) => (e.event_types?.length ? e.event_types.join(", ") : "all") },
            { label: "State", cell: (e) => (e.status === "auto_disabled" ? <Badge text="auto-disabled" tone="bad" /> : e.enabled ? <Badge text="enabled" tone="ok" /> : <Badge text="paused" tone="warn" />) },
            { label: "Secret", cell: (e) => <code>{e.signing_secret_hint}</code> },
            {
              label: "",
              cell: (e) => (
                <span class="row-actions">
                  <ActionButton label={e.enabled ? "Pause" : "Resume"} run={async () => (await api.patch(`${base.root}/endpoints/{id}`, { path: { ...base.path, id: e.id }, body: { enabled: !e.enabled } }), refresh())} />
                  <ActionButton label="Send test" run={async () => setTestResult(await api.post(`${base.root}/endpoints/{id}/test`, { path: { ...base.path, id: e.id }, body: {} }))} />
                  <ActionButton
                    label="Rotate secret"
                    run={async () => {
                      const r = await api.post(`${base.root}/endpoints/{id}/rotate-secret`, { path: { ...base.path, id: e.id }, body: { grace_hours: 24 } });
                      setSecret({ label: `New signing secret (the old one works until ${when(r.previous_secret_expires_at)})`, value: shownOnce(r.signing_secret) });
                      refresh();
                    }}
                  />
                  <ConfirmButton label="Delete" onConfirm={async () => (await api.delete(`${base.root}/endpoints/{id}`, { path: { ...base.path, id: e.id } }), refresh())} />
                </span>
              ),
            },
          ]}
        />
      </Section>
      {testResult && (
        <Section title="Test delivery" actions={<button type="button" class="secondary small" onClick={() => setTestResult(null)}>Close</button>}>
          <AttemptFacts a={testResult} />
        </Section>
      )}
    </>
  );
}

function AttemptFacts({ a }: { a: Attempt }) {
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
          key={keyOf(base)}
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
          path={`${base.root}/events`}
          params={base.path}
          query={filters}
          onRow={(e) => setOpen(e.id)}
          columns={[
            { label: "When", cell: (e) => when(e.created_at) },
            { label: "Type", cell: (e) => <code>{e.type}</code> },
            { label: "Deliveries", cell: (e) => e.deliveries.map((d) => <Badge text={`${d.status} (${d.attempts})`} tone={d.status === "delivered" ? "ok" : d.status === "failed" ? "bad" : "warn"} />) },
            { label: "Test", cell: (e) => (e.is_test ? "test" : "") },
          ]}
        />
      </Section>
      {open && <EventDetail base={base} id={open} onClose={() => setOpen(null)} />}
    </>
  );
}

function EventDetail({ base, id, onClose }: { base: WebhookAt; id: string; onClose: () => void }) {
  const { data, error, reload } = useLoad(() => api.get(`${base.root}/events/{id}`, { path: { ...base.path, id } }), [keyOf(base), id]);
  const [replayed, setReplayed] = useState<AnswerOf<"post", "/mail/v1/workspaces/{workspace_id}/webhooks/events/{id}/replay">["data"] | null>(null);
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
                setReplayed((await api.post(`${base.root}/events/{id}/replay`, { path: { ...base.path, id } })).data);
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
              { label: "#", cell: (a) => a.attempt_number },
              { label: "Trigger", cell: (a) => a.trigger },
              { label: "Status", cell: (a) => (a.status_code ? <Badge text={String(a.status_code)} tone={a.status_code < 300 ? "ok" : "bad"} /> : <Badge text={a.error_class ?? "error"} tone="bad" />) },
              { label: "Latency", cell: (a) => `${a.latency_ms} ms` },
              { label: "When", cell: (a) => when(a.created_at) },
              { label: "Response", cell: (a) => <code class="clip">{a.response_body ?? ""}</code> },
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
