/**
 * Auth (end-user identity for your Apps): Apps with their settings, keys and JWKS; users
 * (search, create, disable, delete); tenants; M2M clients (secret shown once); invites
 * (code shown once); the App's audit log. Every screen but Apps works on one App, picked
 * at the top (rest[0] = its id).
 */
import { useState } from "preact/hooks";
import { api, apiHref, hasBearer, setTokens, type BodyOf, type Get } from "../lib/api";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, CopyButton, ErrorNote, Form, Json, Loading, PagedTable, Section, SecretOnce, Table, useLoad, when } from "../lib/ui";


/** The App a screen works on, and a picker that switches it. */
function useApp(p: ScreenProps, screen: string) {
  const apps = useLoad(() => api.get("/auth/v1/apps", { query: { workspace_id: p.ws.id, limit: 100 } }), [p.ws.id]);
  const list = apps.data?.data ?? [];
  const app = list.find((a) => a.id === p.rest[0]) ?? list[0];
  const picker = (
    <div class="form inline picker">
      <div class="field">
        <label for="auth-app">App</label>
        <select id="auth-app" value={app?.id} onChange={(e) => go(p.href(screen, (e.target as HTMLSelectElement).value))}>
          {list.map((a) => (
            <option value={a.id}>{a.display_name}</option>
          ))}
        </select>
      </div>
    </div>
  );
  const [, setAuthed] = useState(0);
  const gate = !hasBearer() ? (
    <Reauth me={p} onDone={() => setAuthed((n) => n + 1)} />
  ) : apps.error ? (
    <ErrorNote error={apps.error} />
  ) : !apps.data ? (
    <Loading />
  ) : !app ? (
    <p class="muted">No App yet: create one under Auth → Apps.</p>
  ) : null;
  // The path parameter of the App-scoped routes (used once the gate let the screen through).
  return { app, picker, gate, at: { app_slug: app?.slug ?? "" } };
}

/**
 * App-scoped admin routes take the bearer token only (not the cookie). After a reload the
 * console has none in memory: the password, once more, gets one.
 */
function Reauth({ me: p, onDone }: { me: ScreenProps; onDone: () => void }) {
  return (
    <Section title="Confirm your password">
      <p class="muted">Managing an App's users needs a fresh sign-in on this page (its routes take no cookie).</p>
      <Form
        id="reauth"
        submitLabel="Continue"
        fields={[{ name: "password", label: "Password", type: "password", required: true }]}
        onSubmit={async (v) => {
          // An MFA answer carries no tokens: the App screens then answer 401 and the console signs in again.
          const r = await api.post("/platform/v1/auth/signin", { body: { identifier: p.me.account?.username, password: v.password } as BodyOf<"post", "/platform/v1/auth/signin"> });
          setTokens(r as Extract<typeof r, { access_token: string }>);
          onDone();
        }}
      />
    </Section>
  );
}

function Apps(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const open = p.rest[0];
  if (open) return <AppDetail p={p} id={open} />;
  return (
    <>
      <Section title="Apps">
        <PagedTable
          label="Apps"
          path="/auth/v1/apps"
          query={{ workspace_id: p.ws.id }}
          reloadKey={tick}
          columns={[
            { label: "Name", cell: (a) => <a href={p.href("apps", a.id)}>{a.display_name}</a> },
            { label: "Slug", cell: (a) => <code>{a.slug}</code> },
            { label: "Issuer", cell: (a) => <code class="clip">{a.issuer}</code> },
            { label: "Created", cell: (a) => when(a.created_at) },
          ]}
        />
      </Section>
      <Section title="Create an App">
        <Form
          id="create-app"
          submitLabel="Create App"
          resetOnSuccess
          fields={[
            { name: "display_name", label: "Display name", required: true },
            { name: "slug", label: "Slug", required: true, hint: "In the App's URLs: /auth/<slug>/v1/..." },
          ]}
          onSubmit={async (v) => {
            const a = await api.post("/auth/v1/apps", { body: { ...(v as BodyOf<"post", "/auth/v1/apps">), workspace_id: p.ws.id } });
            setTick(tick + 1);
            go(p.href("apps", a.id));
          }}
        />
      </Section>
    </>
  );
}

function AppDetail({ p, id }: { p: ScreenProps; id: string }) {
  const { data: app, error, reload } = useLoad(() => api.get("/auth/v1/apps/{app_id}", { path: { app_id: id } }), [id]);
  const [kid, setKid] = useState<string | null>(null);
  if (error) return <ErrorNote error={error} />;
  if (!app) return <Loading />;
  return (
    <>
      <p>
        <a href={p.href("apps")}>← All Apps</a>
      </p>
      <Section title={app.display_name}>
        <dl class="facts">
          <dt>Slug</dt>
          <dd>
            <code>{app.slug}</code>
          </dd>
          <dt>Issuer</dt>
          <dd>
            <code>{app.issuer}</code>
          </dd>
          <dt>JWKS</dt>
          <dd>
            <a href={apiHref("/auth/{app_slug}/v1/.well-known/jwks.json", { path: { app_slug: app.slug } })} target="_blank" rel="noopener">
              /auth/{app.slug}/v1/.well-known/jwks.json
            </a>
          </dd>
          <dt>Publishable key</dt>
          <dd>
            <code data-testid="publishable-key">{app.publishable_key}</code> <CopyButton text={app.publishable_key} />
          </dd>
        </dl>
        <div class="row-actions">
          <ActionButton label="Rotate signing key" run={async () => setKid((await api.post("/auth/v1/apps/{app_id}/signing-keys/rotate", { path: { app_id: id } })).kid)} />
          <ConfirmButton label="Rotate publishable key" confirm="Old key stops at once: confirm" onConfirm={async () => (await api.post("/auth/v1/apps/{app_id}/publishable-key/rotate", { path: { app_id: id } }), reload())} />
        </div>
        {kid && (
          <p class="notice" role="status">
            New signing key <code>{kid}</code> is in the JWKS; the previous one still verifies tokens it signed.
          </p>
        )}
      </Section>
      <Section title="Settings">
        <Form
          key={app.id + app.settings.signup_enabled}
          id="app-settings"
          submitLabel="Save settings"
          fields={[
            { name: "display_name", label: "Display name", initial: app.display_name },
            { name: "settings", label: "Settings", type: "json", rows: 16, initial: app.settings, hint: "Only the keys you change need to be here; the API checks each value." },
          ]}
          onSubmit={async (v) => {
            await api.patch("/auth/v1/apps/{app_id}", { path: { app_id: id }, body: v as BodyOf<"patch", "/auth/v1/apps/{app_id}"> });
            reload();
          }}
        />
      </Section>
      <Section title="Delete">
        <ConfirmButton label="Delete App" confirm="Deletes every user and key: confirm" onConfirm={async () => (await api.delete("/auth/v1/apps/{app_id}", { path: { app_id: id } }), go(p.href("apps")))} />
      </Section>
    </>
  );
}

function Users(p: ScreenProps) {
  const { app, picker, gate, at } = useApp(p, "users");
  const [q, setQ] = useState("");
  const [tick, setTick] = useState(0);
  const [open, setOpen] = useState<Get<"/auth/{app_slug}/v1/admin/users">["data"][number] | null>(null);
  if (gate) return gate;
  const refresh = () => setTick(tick + 1);
  return (
    <>
      {picker}
      <Section title="Users">
        <div class="form inline">
          <div class="field">
            <label for="user-search">Search</label>
            <input id="user-search" type="search" placeholder="email, username or name" value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} />
          </div>
        </div>
        <PagedTable
          label="Users"
          path="/auth/{app_slug}/v1/admin/users" params={at}
          query={{ q: q || undefined }}
          reloadKey={tick}
          onRow={setOpen}
          columns={[
            { label: "Email", cell: (u) => u.email ?? "—" },
            { label: "Username", cell: (u) => u.username ?? "—" },
            { label: "Verified", cell: (u) => (u.email_verified ? "yes" : "no") },
            { label: "Role", cell: (u) => u.role ?? "—" },
            { label: "Status", cell: (u) => <Badge text={u.status} tone={u.status === "active" ? "ok" : "bad"} /> },
            {
              label: "",
              cell: (u) => (
                <span class="row-actions" onClick={(e) => e.stopPropagation()}>
                  <ActionButton label={u.status === "active" ? "Suspend" : "Reactivate"} run={async () => (await api.patch("/auth/{app_slug}/v1/admin/users/{user_id}", { path: { ...at, user_id: u.id }, body: { status: u.status === "active" ? "suspended" : "active" } }), refresh())} />
                  <ConfirmButton label="Delete" onConfirm={async () => (await api.delete("/auth/{app_slug}/v1/admin/users/{user_id}", { path: { ...at, user_id: u.id } }), refresh())} />
                </span>
              ),
            },
          ]}
        />
      </Section>
      {open && (
        <Section title={`User ${open.email ?? open.username}`} actions={<button type="button" class="secondary small" onClick={() => setOpen(null)}>Close</button>}>
          <Json value={open} />
          <UserSessions at={at} user={open} />
        </Section>
      )}
      <Section title="Create a user">
        <Form
          key={app!.id}
          id="create-user"
          submitLabel="Create user"
          resetOnSuccess
          fields={[
            { name: "email", label: "Email", type: "email" },
            { name: "username", label: "Username" },
            { name: "password", label: "Password", type: "password" },
            { name: "email_verified", label: "Email verified", type: "checkbox" },
          ]}
          onSubmit={async (v) => (await api.post("/auth/{app_slug}/v1/admin/users", { path: at, body: v as BodyOf<"post", "/auth/{app_slug}/v1/admin/users"> }), refresh())}
        />
      </Section>
    </>
  );
}

/** On the user detail: the user's live sessions (revoke one) and the admin MFA reset. */
function UserSessions({ at, user }: { at: { app_slug: string }; user: { id: string } }) {
  const [tick, setTick] = useState(0);
  const [reset, setReset] = useState(false);
  const path = { ...at, user_id: user.id };
  const sessions = useLoad(() => api.get("/auth/{app_slug}/v1/admin/users/{user_id}/sessions", { path }), [at.app_slug, user.id, tick]);
  return (
    <>
      <h3>Sessions</h3>
      {sessions.error ? (
        <ErrorNote error={sessions.error} />
      ) : !sessions.data ? (
        <Loading />
      ) : (
        <Table
          label="Sessions"
          rows={sessions.data.data}
          empty="No live session."
          columns={[
            { label: "Started", cell: (s) => when(s.created_at) },
            { label: "Expires", cell: (s) => when(s.expires_at) },
            { label: "Sign-in", cell: (s) => s.amr.join(" + ") },
            { label: "IP", cell: (s) => s.ip ?? "—" },
            { label: "User agent", cell: (s) => <span class="muted">{s.user_agent ?? "—"}</span> },
            { label: "", cell: (s) => <ConfirmButton label="Revoke" onConfirm={async () => (await api.delete("/auth/{app_slug}/v1/admin/users/{user_id}/sessions/{session_id}", { path: { ...path, session_id: s.id } }), setTick(tick + 1))} /> },
          ]}
        />
      )}
      <h3>MFA</h3>
      <p class="muted">Resetting removes every MFA factor and recovery code of this user: the next sign-in needs the password only, and the user can enrol again.</p>
      <ConfirmButton label="Reset MFA" confirm="Confirm MFA reset" onConfirm={async () => (await api.delete("/auth/{app_slug}/v1/admin/users/{user_id}/mfa", { path }), setReset(true))} />
      {reset && <span class="muted"> MFA reset.</span>}
    </>
  );
}

function Tenants(p: ScreenProps) {
  const { app, picker, gate, at } = useApp(p, "tenants");
  const [tick, setTick] = useState(0);
  if (gate) return gate;
  return (
    <>
      {picker}
      <Section title="Tenants">
        <PagedTable
          label="Tenants"
          path="/auth/{app_slug}/v1/tenants" params={at}
          reloadKey={tick}
          columns={[
            { label: "Name", cell: (t) => t.display_name },
            { label: "Slug", cell: (t) => <code>{t.slug}</code> },
            { label: "Id", cell: (t) => <code>{t.display_id}</code> },
            { label: "Status", cell: (t) => <Badge text={t.status} tone={t.status === "active" ? "ok" : "warn"} /> },
            { label: "", cell: (t) => <ConfirmButton label="Delete" onConfirm={async () => (await api.delete("/auth/{app_slug}/v1/tenants/{tenant_id}", { path: { ...at, tenant_id: t.id } }), setTick(tick + 1))} /> },
          ]}
        />
      </Section>
      <Section title="Create a tenant">
        <Form
          key={app!.id}
          id="create-tenant"
          submitLabel="Create tenant"
          resetOnSuccess
          fields={[
            { name: "display_name", label: "Display name", required: true },
            { name: "slug", label: "Slug" },
          ]}
          onSubmit={async (v) => (await api.post("/auth/{app_slug}/v1/tenants", { path: at, body: v as BodyOf<"post", "/auth/{app_slug}/v1/tenants"> }), setTick(tick + 1))}
        />
      </Section>
    </>
  );
}

function M2M(p: ScreenProps) {
  const { app, picker, gate } = useApp(p, "m2m");
  const [tick, setTick] = useState(0);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  if (gate) return gate;
  const at = { app_id: app!.id };
  return (
    <>
      {picker}
      <Section title="Create an M2M client">
        {secret ? (
          <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />
        ) : (
          <Form
            key={app!.id}
            id="create-m2m"
            submitLabel="Create client"
            resetOnSuccess
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "permissions", label: "Permissions", hint: "Comma-separated permission names of the App's catalogue." },
            ]}
            onSubmit={async (v) => {
              const permissions = String(v.permissions ?? "").split(",").map((s) => s.trim()).filter(Boolean);
              const c = await api.post("/auth/v1/apps/{app_id}/m2m-clients", { path: at, body: { name: v.name as string, permissions } });
              setSecret({ label: `Client secret of ${c.client_id}`, value: c.client_secret });
              setTick(tick + 1);
            }}
          />
        )}
      </Section>
      <Section title="M2M clients">
        <PagedTable
          label="M2M clients"
          path="/auth/v1/apps/{app_id}/m2m-clients"
          params={at}
          reloadKey={tick}
          columns={[
            { label: "Name", cell: (c) => c.name },
            { label: "Client id", cell: (c) => <code>{c.client_id}</code> },
            { label: "Secret", cell: (c) => <code>{c.secret_hint}</code> },
            { label: "Permissions", cell: (c) => c.permissions.join(", ") || "—" },
            { label: "Last used", cell: (c) => when(c.last_used_at) },
            {
              label: "",
              cell: (c) => (
                <span class="row-actions">
                  <ActionButton label="Rotate secret" run={async () => setSecret({ label: `New client secret of ${c.client_id}`, value: (await api.post("/auth/v1/apps/{app_id}/m2m-clients/{id}/rotate-secret", { path: { ...at, id: c.id } })).client_secret })} />
                  <ConfirmButton label="Delete" onConfirm={async () => (await api.delete("/auth/v1/apps/{app_id}/m2m-clients/{id}", { path: { ...at, id: c.id } }), setTick(tick + 1))} />
                </span>
              ),
            },
          ]}
        />
      </Section>
    </>
  );
}

function Invites(p: ScreenProps) {
  const { app, picker, gate, at } = useApp(p, "invites");
  const [tick, setTick] = useState(0);
  const [code, setCode] = useState<string | null>(null);
  if (gate) return gate;
  return (
    <>
      {picker}
      <Section title="Invite a user">
        {code ? (
          <SecretOnce label="Invite code" value={code} onDone={() => setCode(null)} />
        ) : (
          <Form
            key={app!.id}
            id="create-invite"
            submitLabel="Create invite"
            resetOnSuccess
            fields={[
              { name: "email", label: "Email", type: "email" },
              { name: "max_uses", label: "Max uses", type: "number" },
              { name: "send_email", label: "Mail it to the address", type: "checkbox" },
            ]}
            onSubmit={async (v) => {
              setCode((await api.post("/auth/{app_slug}/v1/invites", { path: at, body: v as BodyOf<"post", "/auth/{app_slug}/v1/invites"> })).code);
              setTick(tick + 1);
            }}
          />
        )}
      </Section>
      <Section title="Invites">
        <PagedTable
          label="Invites"
          path="/auth/{app_slug}/v1/invites" params={at}
          reloadKey={tick}
          columns={[
            { label: "Email", cell: (i) => i.email ?? "anyone" },
            { label: "Code", cell: (i) => <code>{i.code_hint}</code> },
            { label: "Uses", cell: (i) => `${i.uses}/${i.max_uses ?? "∞"}` },
            { label: "Status", cell: (i) => <Badge text={i.status} tone={i.status === "active" ? "ok" : "warn"} /> },
            { label: "Expires", cell: (i) => when(i.expires_at) },
            { label: "", cell: (i) => (i.status === "active" ? <ConfirmButton label="Revoke" onConfirm={async () => (await api.delete("/auth/{app_slug}/v1/invites/{invite_id}", { path: { ...at, invite_id: i.id } }), setTick(tick + 1))} /> : null) },
          ]}
        />
      </Section>
    </>
  );
}

function Audit(p: ScreenProps) {
  const { picker, gate, at } = useApp(p, "audit");
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  if (gate) return gate;
  return (
    <>
      {picker}
      <Section title="Filters">
        <Form
          id="auth-audit-filters"
          inline
          submitLabel="Apply"
          fields={[
            { name: "action", label: "Action" },
            { name: "outcome", label: "Outcome", type: "select", options: ["", "success", "failure"].map((s) => ({ value: s, label: s || "any" })) },
          ]}
          onSubmit={async (v) => setFilters({ action: v.action as string, outcome: v.outcome as string })}
        />
      </Section>
      <Section title="Audit log">
        <PagedTable
          label="Auth audit log"
          path="/auth/{app_slug}/v1/audit-log" params={at}
          query={filters}
          columns={[
            { label: "When", cell: (e) => when(e.created_at) },
            { label: "Action", cell: (e) => <code>{e.action}</code> },
            { label: "Outcome", cell: (e) => <Badge text={e.outcome} tone={e.outcome === "success" ? "ok" : "bad"} /> },
            { label: "Actor", cell: (e) => `${e.actor?.type ?? ""} ${e.actor?.id ?? ""}` },
            { label: "Target", cell: (e) => `${e.target?.type ?? ""} ${e.target?.id ?? ""}` },
          ]}
        />
      </Section>
    </>
  );
}

export const authModule: ConsoleModule = {
  id: "auth",
  title: "Auth",
  scope: "workspace",
  service: "auth",
  screens: [
    { id: "apps", title: "Apps", view: Apps },
    { id: "users", title: "Users", view: Users },
    { id: "tenants", title: "Tenants", view: Tenants },
    { id: "m2m", title: "M2M clients", view: M2M },
    { id: "invites", title: "Invites", view: Invites },
    { id: "audit", title: "Audit", view: Audit },
  ],
};
