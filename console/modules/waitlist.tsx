/**
 * Waitlists: list and create, status moves, the entries table (filters, approve / reject,
 * bulk on the selection or the first N pending), the waitlist's settings, analytics charts
 * (sign-ups, decisions, views per day; variants, referrers, utm sources), the CSV export,
 * and the workspace's waitlist settings (brand, sender, templates, Auth App).
 */
import { useState } from "preact/hooks";
import { api, apiHref, type BodyOf, type Get } from "../lib/api";
import { Chart } from "../lib/chart";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Loading, PagedTable, Section, Table, Tabs, useLoad, when } from "../lib/ui";

/** The path parameter of the workspace's waitlist routes. */
const wsBase = (p: ScreenProps) => ({ workspace_id: p.ws.id });
/** The path parameters of one waitlist's routes. */
type At = { workspace_id: string; waitlist_id: string };
const tone = (s: string) => (["open", "approved", "sent"].includes(s) ? "ok" : ["rejected", "closed", "failed"].includes(s) ? "bad" : s === "pending" ? "info" : "warn");
/** Status moves the API allows (docs/waitlist.md, "Reference"). */
const MOVES: Record<string, BodyOf<"patch", "/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/status">["status"][]> = { draft: ["open"], open: ["paused", "closed"], paused: ["open", "closed"], closed: ["open"] };

function Waitlists(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  if (p.rest[0]) return <WaitlistDetail p={p} id={p.rest[0]} tab={p.rest[1] ?? "entries"} />;
  return (
    <>
      <Section title="Waitlists">
        <PagedTable
          label="Waitlists"
          path="/waitlist/v1/workspaces/{workspace_id}/waitlists" params={wsBase(p)}
          reloadKey={tick}
          empty="No waitlist yet."
          onRow={(w) => go(p.href("waitlists", w.id))}
          columns={[
            { label: "Name", cell: (w) => <a href={p.href("waitlists", w.id)}>{w.display_name}</a> },
            { label: "Slug", cell: (w) => <code>{w.slug}</code> },
            { label: "Status", cell: (w) => <Badge text={w.status} tone={tone(w.status)} /> },
            { label: "Created", cell: (w) => when(w.created_at) },
          ]}
        />
      </Section>
      <Section title="Create a waitlist">
        <Form
          id="create-waitlist"
          submitLabel="Create waitlist"
          resetOnSuccess
          fields={[
            { name: "display_name", label: "Display name", required: true },
            { name: "slug", label: "Slug", required: true, hint: "2-63 of a-z, 0-9 and hyphens: the public URL /waitlist/v1/waitlists/<workspace>/<slug>." },
            { name: "description", label: "Description", type: "textarea", rows: 2 },
          ]}
          onSubmit={async (v) => {
            const w = await api.post("/waitlist/v1/workspaces/{workspace_id}/waitlists", { path: wsBase(p), body: v as BodyOf<"post", "/waitlist/v1/workspaces/{workspace_id}/waitlists"> });
            setTick(tick + 1);
            go(p.href("waitlists", w.id));
          }}
        />
      </Section>
    </>
  );
}

function WaitlistDetail({ p, id, tab }: { p: ScreenProps; id: string; tab: string }) {
  const at: At = { ...wsBase(p), waitlist_id: id };
  const wl = useLoad(() => api.get("/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}", { path: at }), [p.ws.id, id]);
  const counts = useLoad(() => api.get("/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/entries/count", { path: at }), [p.ws.id, id]);
  if (wl.error) return <ErrorNote error={wl.error} />;
  const w = wl.data;
  if (!w) return <Loading />;
  const changed = () => (wl.reload(), counts.reload());
  return (
    <>
      <p>
        <a href={p.href("waitlists")}>← All waitlists</a>
      </p>
      <Section title={w.display_name} actions={<Badge text={w.status} tone={tone(w.status)} />}>
        <dl class="facts">
          <dt>Public URL</dt>
          <dd>
            <code>{apiHref("/waitlist/v1/waitlists/{workspace_slug}/{waitlist_slug}", { path: { workspace_slug: w.workspace_slug, waitlist_slug: w.slug } })}</code>
          </dd>
          <dt>Entries</dt>
          <dd data-testid="entry-counts">{counts.data ? `${counts.data.total} in all: ${counts.data.pending} pending, ${counts.data.approved} approved, ${counts.data.rejected} rejected` : "…"}</dd>
        </dl>
        <div class="row-actions">
          {(MOVES[w.status] ?? []).map((s) => (
            <ActionButton label={s === "open" ? "Open" : s === "paused" ? "Pause" : "Close"} kind={s === "open" ? "primary" : "secondary"} run={async () => (await api.patch("/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/status", { path: at, body: { status: s } }), wl.reload())} />
          ))}
          <a class="button-link" href={apiHref("/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/entries/export.csv", { path: at })} download={`${w.slug}-entries.csv`}>
            Export CSV
          </a>
          <ConfirmButton label="Delete waitlist" onConfirm={async () => (await api.delete("/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}", { path: at }), go(p.href("waitlists")))} />
        </div>
      </Section>
      <Tabs
        tabs={[
          { id: "entries", label: "Entries" },
          { id: "analytics", label: "Analytics" },
          { id: "settings", label: "Settings" },
        ]}
        current={tab}
        onSelect={(t) => go(p.href("waitlists", id, t))}
      />
      {tab === "entries" && <Entries at={at} onChange={changed} />}
      {tab === "analytics" && <Analytics at={at} />}
      {tab === "settings" && <WaitlistSettings at={at} w={w} onSaved={wl.reload} />}
    </>
  );
}

function Entries({ at, onChange }: { at: At; onChange: () => void }) {
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  const [selected, setSelected] = useState<string[]>([]);
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<string | null>(null);
  const refresh = () => (setTick((t) => t + 1), setSelected([]), onChange());
  const toggle = (eid: string) => setSelected((s) => (s.includes(eid) ? s.filter((x) => x !== eid) : [...s, eid]));
  const decide = async (eid: string, action: "approve" | "reject") => (await api.post(`/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/entries/{entry_id}/${action}`, { path: { ...at, entry_id: eid } }), refresh());
  const bulk = async (body: BodyOf<"post", "/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/entries/bulk">) => {
    const r = await api.post("/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/entries/bulk", { path: at, body });
    setNote(`${r.action === "approve" ? "Approved" : "Rejected"} ${r.count} ${r.count === 1 ? "entry" : "entries"}.`);
    refresh();
  };
  return (
    <>
      <Section title="Filter entries">
        <Form
          id="entry-filters"
          inline
          submitLabel="Apply"
          fields={[
            { name: "q", label: "Email or name" },
            { name: "status", label: "Status", type: "select", options: ["", "pending", "approved", "rejected"].map((s) => ({ value: s, label: s || "any" })) },
            { name: "sort", label: "Order", type: "select", options: [{ value: "position", label: "queue position" }, { value: "created_at", label: "sign-up time" }] },
          ]}
          onSubmit={async (v) => (setFilters(v as Record<string, string | undefined>), setSelected([]))}
        />
      </Section>
      <Section
        title="Entries"
        actions={
          <span class="row-actions">
            <ActionButton label="Refresh" run={async () => refresh()} />
          </span>
        }
      >
        <div class="row-actions bulk" role="group" aria-label="Bulk actions">
          <span class="muted">{selected.length} selected</span>
          <ActionButton label="Approve selected" kind="primary" run={() => (selected.length ? bulk({ action: "approve", entry_ids: selected }) : Promise.reject(new Error("Select entries first")))} />
          <ActionButton label="Reject selected" run={() => (selected.length ? bulk({ action: "reject", entry_ids: selected }) : Promise.reject(new Error("Select entries first")))} />
          <TopN onRun={(n) => bulk({ action: "approve", top: n })} />
        </div>
        {note && (
          <p class="notice" role="status">
            {note}
          </p>
        )}
        <PagedTable
          label="Entries"
          path="/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/entries" params={at}
          query={filters}
          reloadKey={tick}
          limit={50}
          empty="No entry matches."
          columns={[
            {
              label: "",
              cell: (e) =>
                e.status === "pending" ? <input type="checkbox" aria-label={`Select ${e.email}`} checked={selected.includes(e.id)} onChange={() => toggle(e.id)} /> : null,
            },
            { label: "#", cell: (e) => e.position ?? "—" },
            { label: "Email", cell: (e) => e.email },
            { label: "Name", cell: (e) => e.name ?? "—" },
            { label: "Status", cell: (e) => <Badge text={e.status} tone={tone(e.status)} /> },
            { label: "Referrals", cell: (e) => e.referral_count },
            { label: "Invite", cell: (e) => <InviteCell invite={e.invite} /> },
            { label: "Joined", cell: (e) => when(e.created_at) },
            {
              label: "",
              cell: (e) =>
                e.status === "pending" ? (
                  <span class="row-actions">
                    <ActionButton label="Approve" kind="primary" run={() => decide(e.id, "approve")} />
                    <ActionButton label="Reject" run={() => decide(e.id, "reject")} />
                  </span>
                ) : null,
            },
          ]}
        />
      </Section>
    </>
  );
}

/** An approved entry's Auth invite: status and App; the error's code and message while it failed or is retried. */
function InviteCell({ invite }: { invite: { status: string; app_slug: string | null; attempts: number; error: { code: string; message: string } | null; updated_at: string | null } | null }) {
  if (!invite) return <>—</>;
  return (
    <span data-testid="entry-invite" title={`${invite.attempts} attempt${invite.attempts === 1 ? "" : "s"}, ${when(invite.updated_at)}`}>
      <Badge text={invite.status} tone={tone(invite.status)} /> {invite.app_slug ?? ""}
      {invite.error && (
        <span class={invite.status === "failed" ? "error inline-error" : "muted inline-error"}>
          <code>{invite.error.code}</code> {invite.error.message}
        </span>
      )}
    </span>
  );
}

function TopN({ onRun }: { onRun: (n: number) => Promise<unknown> }) {
  const [n, setN] = useState("10");
  return (
    <span class="row-actions">
      <label class="muted" for="top-n">
        First
      </label>
      <input id="top-n" class="narrow" type="number" min={1} max={500} value={n} onInput={(e) => setN((e.target as HTMLInputElement).value)} />
      <ConfirmButton label="Approve first N pending" danger={false} onConfirm={() => onRun(Number(n))} />
    </span>
  );
}

function Analytics({ at }: { at: At }) {
  const a = useLoad(() => api.get("/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/analytics", { path: at }), [at.workspace_id, at.waitlist_id]);
  if (a.error) return <ErrorNote error={a.error} />;
  const d = a.data;
  if (!d) return <Loading />;
  const x = d.daily.map((r) => Date.parse(r.date) / 1000);
  const col = (k: string) => d.daily.map((r) => Number((r as Record<string, unknown>)[k]));
  const rate = (r: number | null) => (r === null ? "—" : `${(r * 100).toFixed(1)}%`);
  return (
    <>
      <Section title={`Totals ${d.since} – ${d.until}`}>
        <dl class="facts" data-testid="analytics-totals">
          <dt>Sign-ups</dt>
          <dd>{d.totals.signups}</dd>
          <dt>Approved</dt>
          <dd>{d.totals.approvals}</dd>
          <dt>Rejected</dt>
          <dd>{d.totals.rejections}</dd>
          <dt>Referred sign-ups</dt>
          <dd>{d.totals.referrals}</dd>
          <dt>Views</dt>
          <dd>{d.totals.views}</dd>
          <dt>Conversion</dt>
          <dd>{rate(d.totals.conversion_rate)}</dd>
        </dl>
      </Section>
      <div class="split">
        <Section title="Sign-ups and decisions per day">
          <Chart title="Per day" x={x} series={[{ label: "sign-ups", values: col("signups") }, { label: "approved", values: col("approvals") }, { label: "rejected", values: col("rejections") }]} />
        </Section>
        <Section title="Views and referrals per day">
          <Chart title="Per day" x={x} series={[{ label: "views", values: col("views") }, { label: "referred", values: col("referrals") }]} />
        </Section>
      </div>
      <div class="split">
        <Section title="Variants">
          <Table
            label="Variants"
            rows={d.variants}
            columns={[
              { label: "Variant", cell: (v) => v.name ?? "(none)" },
              { label: "Views", cell: (v) => v.views },
              { label: "Sign-ups", cell: (v) => v.signups },
              { label: "Conversion", cell: (v) => rate(v.conversion_rate) },
            ]}
          />
        </Section>
        <Section title="Top referrers">
          <Table
            label="Top referrers"
            rows={d.top_referrers}
            empty="No referral yet."
            columns={[
              { label: "Email", cell: (r) => r.email },
              { label: "Code", cell: (r) => <code>{r.referral_code}</code> },
              { label: "Referrals", cell: (r) => r.referral_count },
            ]}
          />
          <h3>utm sources</h3>
          <Table label="utm sources" rows={d.utm_sources} empty="None in range." columns={[{ label: "Source", cell: (r) => r.source ?? "(none)" }, { label: "Sign-ups", cell: (r) => r.signups }]} />
        </Section>
      </div>
    </>
  );
}

function WaitlistSettings({ at, w, onSaved }: { at: At; w: Get<"/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}">; onSaved: () => void }) {
  const s = w.settings;
  const [saved, setSaved] = useState(false);
  return (
    <Section title="Waitlist settings">
      <Form
        key={w.updated_at}
        id="waitlist-settings"
        submitLabel="Save settings"
        fields={[
          { name: "display_name", label: "Display name", initial: w.display_name },
          { name: "description", label: "Description", type: "textarea", rows: 2, initial: w.description ?? "" },
          { name: "approval_required", label: "Approval required (off: sign-ups are approved at once)", type: "checkbox", initial: s.approval_required },
          { name: "max_entries", label: "Maximum entries (empty: no limit)", type: "number", initial: s.max_entries ?? "" },
          { name: "referral_boost", label: "Places gained per referral", type: "number", initial: s.referral_boost },
          { name: "signups_per_minute", label: "Sign-ups per minute", type: "number", initial: s.signups_per_minute },
          { name: "allowed_origins", label: "Allowed origins", hint: "Comma-separated; * for any.", initial: s.allowed_origins.join(", ") },
          { name: "block_disposable", label: "Refuse disposable email domains", type: "checkbox", initial: s.block_disposable },
          { name: "show_signup_count", label: "Show the sign-up count publicly", type: "checkbox", initial: s.show_signup_count },
          { name: "confirmation_message", label: "Confirmation message", initial: s.confirmation_message ?? "" },
          { name: "invite_accept_url", label: "Invite accept URL", type: "url", initial: s.invite_accept_url ?? "" },
          { name: "custom_fields", label: "Custom fields (JSON)", type: "json", rows: 4, initial: s.custom_fields },
        ]}
        onSubmit={async (v) => {
          setSaved(false);
          const settings = {
            approval_required: v.approval_required,
            max_entries: v.max_entries ?? null,
            referral_boost: v.referral_boost,
            signups_per_minute: v.signups_per_minute,
            allowed_origins: String(v.allowed_origins ?? "").split(",").map((o) => o.trim()).filter(Boolean),
            block_disposable: v.block_disposable,
            show_signup_count: v.show_signup_count,
            confirmation_message: v.confirmation_message ?? null,
            invite_accept_url: v.invite_accept_url ?? null,
            custom_fields: v.custom_fields ?? [],
          };
          await api.patch("/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}", { path: at, body: { display_name: v.display_name, description: v.description ?? null, settings } as BodyOf<"patch", "/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}"> });
          setSaved(true);
          onSaved();
        }}
      />
      {saved && (
        <p class="notice" role="status">
          Saved.
        </p>
      )}
    </Section>
  );
}

const WS_FIELDS: [string, string, string?][] = [
  ["brand_name", "Brand name"],
  ["brand_logo_url", "Brand logo URL"],
  ["primary_color", "Primary colour (#RRGGBB)"],
  ["default_auth_app_slug", "Auth App approved entries are invited into (slug)"],
  ["default_sender_domain_id", "Sender mail domain", "domain"],
  ["default_sender_address", "Sender address"],
  ["welcome_template_name", "Welcome template"],
  ["approved_template_name", "Approved template"],
  ["rejected_template_name", "Rejected template"],
];

function WorkspaceSettings(p: ScreenProps) {
  const s = useLoad(() => api.get("/waitlist/v1/workspaces/{workspace_id}/waitlist/settings", { path: wsBase(p) }), [p.ws.id]);
  const domains = useLoad(() => (p.ws.services.includes("mail") ? api.get("/mail/v1/workspaces/{workspace_id}/domains", { path: wsBase(p) }) : Promise.resolve({ data: [] })), [p.ws.id]);
  const [saved, setSaved] = useState(false);
  if (s.error) return <ErrorNote error={s.error} />;
  if (!s.data || !domains.data) return <Loading />;
  const sending = domains.data.data.filter((d) => d.intent !== "receive");
  return (
    <Section title="Waitlist settings of the workspace">
      <p class="muted">Brand, sender and templates of the waitlist mails, and the Auth App approved entries are invited into. Mail needs all five mail fields. Last saved: {when(s.data.updated_at)}</p>
      <Form
        key={s.data.updated_at ?? "new"}
        id="waitlist-ws-settings"
        submitLabel="Save"
        fields={[
          ...WS_FIELDS.map(([name, label, kind]) =>
            kind === "domain"
              ? { name, label, type: "select" as const, initial: (s.data as Record<string, unknown>)[name] ?? "", options: [{ value: "", label: "(none)" }, ...sending.map((d) => ({ value: d.id, label: `${d.fqdn} (${d.status})` }))] }
              : { name, label, initial: (s.data as Record<string, unknown>)[name] ?? "" },
          ),
          { name: "notifications_via_mail", label: "Send the welcome, approved and rejected mails", type: "checkbox", initial: s.data.notifications_via_mail },
        ]}
        onSubmit={async (v) => {
          setSaved(false);
          // Empty fields clear their value (null), as the API reads them.
          const body = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, x === undefined ? null : x]));
          await api.put("/waitlist/v1/workspaces/{workspace_id}/waitlist/settings", { path: wsBase(p), body: body as BodyOf<"put", "/waitlist/v1/workspaces/{workspace_id}/waitlist/settings"> });
          setSaved(true);
          s.reload();
        }}
      />
      {saved && (
        <p class="notice" role="status">
          Saved.
        </p>
      )}
    </Section>
  );
}

export const waitlistModule: ConsoleModule = {
  id: "waitlist",
  title: "Waitlists",
  scope: "workspace",
  service: "waitlist",
  screens: [
    { id: "waitlists", title: "Waitlists", view: Waitlists },
    { id: "settings", title: "Settings", view: WorkspaceSettings },
  ],
};
