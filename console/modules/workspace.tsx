/** Workspace: overview, members, invitations, roles and policies, API keys, personal tokens, services, audit log. */
import { useState } from "preact/hooks";
import { api, type BodyOf, type Get } from "../lib/api";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { ActionButton, Badge, ConfirmButton, Form, Json, Loading, PagedTable, Section, SecretOnce, Table, useLoad, when, ErrorNote } from "../lib/ui";

/** The path parameters of the workspace routes. */
const ws = (p: ScreenProps) => ({ workspace_slug: p.ws.slug });
const ALLOW_ALL = [{ effect: "allow", actions: ["*"], resources: ["*"] }];

function Overview(p: ScreenProps) {
  const { data, error, reload } = useLoad(() => api.get("/platform/v1/workspaces/{workspace_slug}", { path: ws(p) }), [p.ws.slug]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return <Loading />;
  return (
    <>
      <Section title="Workspace">
        <dl class="facts">
          <dt>Name</dt>
          <dd>{data.display_name}</dd>
          <dt>Slug</dt>
          <dd>
            <code>{data.slug}</code>
          </dd>
          <dt>Id</dt>
          <dd>
            <code>{data.id}</code>
          </dd>
          <dt>Your role</dt>
          <dd>{data.member_role ?? p.ws.role}</dd>
          <dt>Created</dt>
          <dd>{when(data.created_at)}</dd>
          <dt>Services</dt>
          <dd>{p.ws.services.join(", ")}</dd>
        </dl>
      </Section>
      <Section title="Rename">
        <Form
          id="rename-workspace"
          submitLabel="Save"
          fields={[{ name: "display_name", label: "Display name", required: true, initial: data.display_name }]}
          onSubmit={async (v) => {
            await api.patch("/platform/v1/workspaces/{workspace_slug}", { path: ws(p), body: v as BodyOf<"patch", "/platform/v1/workspaces/{workspace_slug}"> });
            reload();
            await p.refreshMe();
          }}
        />
      </Section>
    </>
  );
}

function useRoles(p: ScreenProps) {
  return useLoad(() => api.get("/platform/v1/workspaces/{workspace_slug}/roles", { path: ws(p), query: { limit: 100 } }), [p.ws.slug]);
}

function Members(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const [error, setError] = useState<Error | null>(null);
  const roles = useRoles(p);
  const options = (roles.data?.data ?? []).map((r) => ({ value: r.id, label: r.name }));
  return (
    <Section title="Members">
      <ErrorNote error={error} />
      <PagedTable
        label="Members"
        path="/platform/v1/workspaces/{workspace_slug}/members" params={ws(p)}
        reloadKey={tick}
        columns={[
          { label: "Username", cell: (m) => m.username },
          { label: "Email", cell: (m) => m.email },
          {
            label: "Role",
            cell: (m) => (
              <select
                aria-label={`Role of ${m.username}`}
                value={m.role_id}
                onChange={async (e) => {
                  setError(null);
                  await api.patch("/platform/v1/workspaces/{workspace_slug}/members/{member_id}", { path: { ...ws(p), member_id: m.id }, body: { role_id: (e.target as HTMLSelectElement).value } }).catch(setError);
                  setTick(tick + 1);
                }}
              >
                {options.length ? options.map((o) => <option value={o.value}>{o.label}</option>) : <option value={m.role_id}>{m.role}</option>}
              </select>
            ),
          },
          { label: "Joined", cell: (m) => when(m.joined_at) },
          { label: "", cell: (m) => <ConfirmButton label="Remove" onConfirm={async () => (await api.delete("/platform/v1/workspaces/{workspace_slug}/members/{member_id}", { path: { ...ws(p), member_id: m.id } }), setTick(tick + 1))} /> },
        ]}
      />
    </Section>
  );
}

function Invitations(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const roles = useRoles(p);
  if (!roles.data) return <Loading />;
  const options = roles.data.data.filter((r) => r.name !== "owner").map((r) => ({ value: r.id, label: r.name }));
  return (
    <>
      <Section title="Invite someone">
        <Form
          id="invite-member"
          submitLabel="Send invitation"
          resetOnSuccess
          fields={[
            { name: "email", label: "Email", type: "email", required: true },
            { name: "role_id", label: "Role", type: "select", options },
          ]}
          onSubmit={async (v) => {
            await api.post("/platform/v1/workspaces/{workspace_slug}/invitations", { path: ws(p), body: v as BodyOf<"post", "/platform/v1/workspaces/{workspace_slug}/invitations"> });
            setTick(tick + 1);
          }}
        />
      </Section>
      <Section title="Pending invitations">
        <PagedTable
          label="Invitations"
          path="/platform/v1/workspaces/{workspace_slug}/invitations" params={ws(p)}
          reloadKey={tick}
          empty="No pending invitations."
          columns={[
            { label: "Email", cell: (i) => i.email },
            { label: "Role", cell: (i) => i.role },
            { label: "Expires", cell: (i) => when(i.expires_at) },
            { label: "", cell: (i) => <ConfirmButton label="Revoke" onConfirm={async () => (await api.delete("/platform/v1/workspaces/{workspace_slug}/invitations/{invitation_id}", { path: { ...ws(p), invitation_id: i.id } }), setTick(tick + 1))} /> },
          ]}
        />
      </Section>
    </>
  );
}

type Role = Get<"/platform/v1/workspaces/{workspace_slug}/roles">["data"][number];

const POLICY_HINT = 'A list of statements: [{"effect": "allow", "actions": ["mail.*"], "resources": ["*"]}]. The API checks every action name.';

function Roles(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const [editing, setEditing] = useState<Role | null>(null);
  return (
    <>
      <Section title="Roles">
        <PagedTable
          label="Roles"
          path="/platform/v1/workspaces/{workspace_slug}/roles" params={ws(p)}
          reloadKey={tick}
          columns={[
            { label: "Name", cell: (r) => (r.builtin ? r.name : <button type="button" class="link" onClick={() => setEditing(r)}>{r.name}</button>) },
            { label: "Kind", cell: (r) => <Badge text={r.builtin ? "built-in" : "custom"} tone={r.builtin ? "info" : undefined} /> },
            { label: "Description", cell: (r) => r.description },
            { label: "Actions allowed", cell: (r) => <code class="clip">{r.policy.flatMap((s) => s.actions).join(", ")}</code> },
            { label: "", cell: (r) => (r.builtin ? null : <ConfirmButton label="Delete" onConfirm={async () => (await api.delete("/platform/v1/workspaces/{workspace_slug}/roles/{role_id}", { path: { ...ws(p), role_id: r.id } }), setTick(tick + 1))} />) },
          ]}
        />
      </Section>
      {editing ? (
        <Section title={`Edit role ${editing.name}`} actions={<button type="button" class="secondary small" onClick={() => setEditing(null)}>Close</button>}>
          <Form
            key={editing.id}
            id="edit-role"
            submitLabel="Save role"
            fields={[
              { name: "name", label: "Name", required: true, initial: editing.name },
              { name: "description", label: "Description", initial: editing.description ?? "" },
              { name: "policy", label: "Policy", type: "json", rows: 8, initial: editing.policy, hint: POLICY_HINT },
            ]}
            onSubmit={async (v) => {
              await api.patch("/platform/v1/workspaces/{workspace_slug}/roles/{role_id}", { path: { ...ws(p), role_id: editing.id }, body: v as BodyOf<"patch", "/platform/v1/workspaces/{workspace_slug}/roles/{role_id}"> });
              setEditing(null);
              setTick(tick + 1);
            }}
          />
        </Section>
      ) : (
        <Section title="Create a role">
          <Form
            id="create-role"
            submitLabel="Create role"
            resetOnSuccess
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "description", label: "Description" },
              { name: "policy", label: "Policy", type: "json", rows: 8, initial: [{ effect: "allow", actions: ["workspace.read"], resources: ["*"] }], hint: POLICY_HINT },
            ]}
            onSubmit={async (v) => {
              await api.post("/platform/v1/workspaces/{workspace_slug}/roles", { path: ws(p), body: v as BodyOf<"post", "/platform/v1/workspaces/{workspace_slug}/roles"> });
              setTick(tick + 1);
            }}
          />
        </Section>
      )}
    </>
  );
}

function ApiKeys(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <>
      <Section title="Create an API key">
        {secret ? (
          <SecretOnce label="New API key" value={secret} onDone={() => setSecret(null)} />
        ) : (
          <Form
            id="create-key"
            submitLabel="Create key"
            resetOnSuccess
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "policy", label: "Policy", type: "json", rows: 6, initial: ALLOW_ALL, hint: "What the key may do; it never exceeds your own role." },
              { name: "expires_at", label: "Expires (optional)", type: "datetime-local" },
            ]}
            onSubmit={async (v) => {
              const body = { ...v, expires_at: v.expires_at ? new Date(String(v.expires_at)).toISOString() : undefined };
              const k = await api.post("/platform/v1/workspaces/{workspace_slug}/api-keys", { path: ws(p), body: body as BodyOf<"post", "/platform/v1/workspaces/{workspace_slug}/api-keys"> });
              setSecret(k.key);
              setTick(tick + 1);
            }}
          />
        )}
      </Section>
      <Section title="API keys">
        <PagedTable
          label="API keys"
          path="/platform/v1/workspaces/{workspace_slug}/api-keys" params={ws(p)}
          reloadKey={tick}
          columns={[
            { label: "Name", cell: (k) => k.name },
            { label: "Key", cell: (k) => <code>{`${k.prefix}…${k.last_four}`}</code> },
            { label: "Created", cell: (k) => when(k.created_at) },
            { label: "Last used", cell: (k) => when(k.last_used_at) },
            { label: "State", cell: (k) => (k.revoked_at ? <Badge text="revoked" tone="bad" /> : <Badge text="active" tone="ok" />) },
            { label: "", cell: (k) => (k.revoked_at ? null : <ConfirmButton label="Revoke" onConfirm={async () => (await api.delete("/platform/v1/workspaces/{workspace_slug}/api-keys/{key_id}", { path: { ...ws(p), key_id: k.id } }), setTick(tick + 1))} />) },
          ]}
        />
      </Section>
    </>
  );
}

function Tokens(_p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <>
      <Section title="Create a personal access token">
        {secret ? (
          <SecretOnce label="New personal token" value={secret} onDone={() => setSecret(null)} />
        ) : (
          <Form
            id="create-token"
            submitLabel="Create token"
            resetOnSuccess
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "expires_in_days", label: "Expires in days (optional)", type: "number" },
            ]}
            onSubmit={async (v) => {
              const t = await api.post("/platform/v1/me/tokens", { body: v as BodyOf<"post", "/platform/v1/me/tokens"> });
              setSecret(t.token);
              setTick(tick + 1);
            }}
          />
        )}
      </Section>
      <Section title="Your tokens">
        <PagedTable
          label="Personal tokens"
          path="/platform/v1/me/tokens"
          reloadKey={tick}
          columns={[
            { label: "Name", cell: (t) => t.name },
            { label: "Token", cell: (t) => <code>{`${t.prefix}…${t.last_four}`}</code> },
            { label: "Expires", cell: (t) => when(t.expires_at) },
            { label: "Last used", cell: (t) => when(t.last_used_at) },
            { label: "", cell: (t) => (t.revoked_at ? <Badge text="revoked" tone="bad" /> : <ConfirmButton label="Revoke" onConfirm={async () => (await api.delete("/platform/v1/me/tokens/{token_id}", { path: { token_id: t.id } }), setTick(tick + 1))} />) },
          ]}
        />
      </Section>
    </>
  );
}

function Services(p: ScreenProps) {
  const { data, error, reload } = useLoad(() => api.get("/platform/v1/workspaces/{workspace_slug}/services", { path: ws(p) }), [p.ws.slug]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return <Loading />;
  return (
    <Section title="Services">
      <Table
        label="Services"
        rows={data.data}
        columns={[
          { label: "Service", cell: (s) => <strong>{s.service}</strong> },
          { label: "Description", cell: (s) => s.description },
          { label: "State", cell: (s) => (s.enabled ? <Badge text="enabled" tone="ok" /> : <Badge text="disabled" />) },
          {
            label: "",
            cell: (s) =>
              s.service === "platform" ? null : (
                <ActionButton
                  label={s.enabled ? `Disable ${s.service}` : `Enable ${s.service}`}
                  run={async () => {
                    const service = { path: { ...ws(p), service: s.service } };
                    await (s.enabled ? api.delete("/platform/v1/workspaces/{workspace_slug}/services/{service}", service) : api.put("/platform/v1/workspaces/{workspace_slug}/services/{service}", service));
                    reload();
                    await p.refreshMe();
                  }}
                />
              ),
          },
        ]}
      />
    </Section>
  );
}

type AuditEntry = Get<"/platform/v1/workspaces/{workspace_slug}/audit-log">["data"][number];

function Audit(p: ScreenProps) {
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  const [open, setOpen] = useState<AuditEntry | null>(null);
  return (
    <>
      <Section title="Filters">
        <Form
          id="audit-filters"
          inline
          submitLabel="Apply"
          fields={[
            { name: "action", label: "Action", placeholder: "apikey.create" },
            { name: "actor_id", label: "Actor id" },
            { name: "since", label: "Since", type: "datetime-local" },
            { name: "until", label: "Until", type: "datetime-local" },
          ]}
          onSubmit={async (v) => {
            const iso = (x: unknown) => (x ? new Date(String(x)).toISOString() : undefined);
            setFilters({ action: v.action as string, actor_id: v.actor_id as string, since: iso(v.since), until: iso(v.until) });
          }}
        />
      </Section>
      <Section title="Audit log">
        <PagedTable
          label="Audit log"
          path="/platform/v1/workspaces/{workspace_slug}/audit-log" params={ws(p)}
          query={filters}
          onRow={setOpen}
          columns={[
            { label: "When", cell: (e) => when(e.created_at) },
            { label: "Action", cell: (e) => <code>{e.action}</code> },
            { label: "Actor", cell: (e) => `${e.actor?.type ?? ""} ${e.actor?.id ?? ""}` },
            { label: "Target", cell: (e) => `${e.target?.type ?? ""} ${e.target?.id ?? ""}` },
            { label: "IP", cell: (e) => e.ip ?? "—" },
          ]}
        />
      </Section>
      {open && (
        <Section title="Entry" actions={<button type="button" class="secondary small" onClick={() => setOpen(null)}>Close</button>}>
          <Json value={open} />
        </Section>
      )}
    </>
  );
}

export const workspaceModule: ConsoleModule = {
  id: "workspace",
  title: "Workspace",
  scope: "workspace",
  screens: [
    { id: "overview", title: "Overview", view: Overview },
    { id: "members", title: "Members", view: Members },
    { id: "invitations", title: "Invitations", view: Invitations },
    { id: "roles", title: "Roles & policies", view: Roles },
    { id: "api-keys", title: "API keys", view: ApiKeys },
    { id: "tokens", title: "Personal tokens", view: Tokens },
    { id: "services", title: "Services", view: Services },
    { id: "audit", title: "Audit log", view: Audit },
  ],
};
