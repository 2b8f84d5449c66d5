/**
 * Waitlists: list and create, status moves, the entries table (filters, approve / reject,
 * bulk on the selection or the first N pending), the waitlist's settings, analytics charts
 * (sign-ups, decisions, views per day; variants, referrers, utm sources), the CSV export,
 * and the workspace's waitlist settings (brand, sender, templates, Auth App).
 */
import { useState } from "preact/hooks";
import { api, get } from "../lib/api";
import { Chart } from "../lib/chart";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Loading, PagedTable, Section, Table, Tabs, useLoad, when } from "../lib/ui";

const wsBase = (p: ScreenProps) => `/waitlist/v1/workspaces/${p.ws.id}`;
const tone = (s: string) => (["open", "approved", "sent"].includes(s) ? "ok" : ["rejected", "closed", "failed"].includes(s) ? "bad" : s === "pending" ? "info" : "warn");
/** Status moves the API allows (docs/waitlist.md, "Reference"). */
const MOVES: Record<string, string[]> = { draft: ["open"], open: ["paused", "closed"], paused: ["open", "closed"], closed: ["open"] };

function Waitlists(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  if (p.rest[0]) return <WaitlistDetail p={p} id={p.rest[0]} tab={p.rest[1] ?? "entries"} />;
  return (
    <>
      <Section title="Waitlists">
        <PagedTable
          label="Waitlists"
          path={`${wsBase(p)}/waitlists`}
          reloadKey={tick}
          empty="No waitlist yet."
          onRow={(w: any) => go(p.href("waitlists", w.id))}
          columns={[
            { label: "Name", cell: (w: any) => <a href={p.href("waitlists", w.id)}>{w.display_name}</a> },
            { label: "Slug", cell: (w: any) => <code>{w.slug}</code> },
            { label: "Status", cell: (w: any) => <Badge text={w.status} tone={tone(w.status)} /> },
            { label: "Created", cell: (w: any) => when(w.created_at) },
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
            const w = await api<{ id: string }>("POST", `${wsBase(p)}/waitlists`, v);
            setTick(tick + 1);
            go(p.href("waitlists", w.id));
          }}
        />
      </Section>
    </>
  );
}

function WaitlistDetail({ p, id, tab }: { p: ScreenProps; id: string; tab: string }) {
  const base = `${wsBase(p)}/waitlists/${id}`;
  const wl = useLoad(() => get(base), [base]);
  const counts = useLoad(() => get<{ total: number; pending: number; approved: number; rejected: number }>(`${base}/entries/count`), [base]);
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
            <code>/waitlist/v1/waitlists/{w.workspace_slug}/{w.slug}</code>
          </dd>
          <dt>Entries</dt>
          <dd data-testid="entry-counts">{counts.data ? `${counts.data.total} in all: ${counts.data.pending} pending, ${counts.data.approved} approved, ${counts.data.rejected} rejected` : "…"}</dd>
        </dl>
        <div class="row-actions">
          {(MOVES[w.status] ?? []).map((s) => (
            <ActionButton label={s === "open" ? "Open" : s === "paused" ? "Pause" : "Close"} kind={s === "open" ? "primary" : "secondary"} run={async () => (await api("PATCH", `${base}/status`, { status: s }), wl.reload())} />
          ))}
          <a class="button-link" href={`${base}/entries/export.csv`} download={`${w.slug}-entries.csv`}>
            Export CSV
          </a>
          <ConfirmButton label="Delete waitlist" onConfirm={async () => (await api("DELETE", base), go(p.href("waitlists")))} />
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
      {tab === "entries" && <Entries base={base} onChange={changed} />}
      {tab === "analytics" && <Analytics base={base} />}
      {tab === "settings" && <WaitlistSettings base={base} w={w} onSaved={wl.reload} />}
    </>
  );
}

function Entries({ base, onChange }: { base: string; onChange: () => void }) {
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  const [selected, setSelected] = useState<string[]>([]);
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<string | null>(null);
  const refresh = () => (setTick((t) => t + 1), setSelected([]), onChange());
  const toggle = (eid: string) => setSelected((s) => (s.includes(eid) ? s.filter((x) => x !== eid) : [...s, eid]));
  const decide = async (eid: string, action: "approve" | "reject") => (await api("POST", `${base}/entries/${eid}/${action}`), refresh());
  const bulk = async (body: Record<string, unknown>) => {
    const r = await api<{ action: string; count: number }>("POST", `${base}/entries/bulk`, body);
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
          path={`${base}/entries`}
          query={filters}
          reloadKey={tick}
          limit={50}
          empty="No entry matches."
          columns={[
            {
              label: "",
              cell: (e: any) =>
                e.status === "pending" ? <input type="checkbox" aria-label={`Select ${e.email}`} checked={selected.includes(e.id)} onChange={() => toggle(e.id)} /> : null,
            },
            { label: "#", cell: (e: any) => e.position ?? "—" },
            { label: "Email", cell: (e: any) => e.email },
            { label: "Name", cell: (e: any) => e.name ?? "—" },
            { label: "Status", cell: (e: any) => <Badge text={e.status} tone={tone(e.status)} /> },
            { label: "Referrals", cell: (e: any) => e.referral_count },
            { label: "Invite", cell: (e: any) => <InviteCell invite={e.invite} /> },
            { label: "Joined", cell: (e: any) => when(e.created_at) },
            {
              label: "",
              cell: (e: any) =>
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

function Analytics({ base }: { base: string }) {
  const a = useLoad(() => get(`${base}/analytics`), [base]);
  if (a.error) return <ErrorNote error={a.error} />;
  const d = a.data;
  if (!d) return <Loading />;
  const x = d.daily.map((r: any) => Date.parse(r.date) / 1000);
  const col = (k: string) => d.daily.map((r: any) => Number(r[k]));
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
              { label: "Variant", cell: (v: any) => v.name ?? "(none)" },
              { label: "Views", cell: (v: any) => v.views },
              { label: "Sign-ups", cell: (v: any) => v.signups },
              { label: "Conversion", cell: (v: any) => rate(v.conversion_rate) },
            ]}
          />
        </Section>
        <Section title="Top referrers">
          <Table
            label="Top referrers"
            rows={d.top_referrers}
            empty="No referral yet."
            columns={[
              { label: "Email", cell: (r: any) => r.email },
              { label: "Code", cell: (r: any) => <code>{r.referral_code}</code> },
              { label: "Referrals", cell: (r: any) => r.referral_count },
            ]}
          />
          <h3>utm sources</h3>
          <Table label="utm sources" rows={d.utm_sources} empty="None in range." columns={[{ label: "Source", cell: (r: any) => r.source ?? "(none)" }, { label: "Sign-ups", cell: (r: any) => r.signups }]} />
        </Section>
      </div>
    </>
  );
}

function WaitlistSettings({ base, w, onSaved }: { base: string; w: any; onSaved: () => void }) {
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
          await api("PATCH", base, { display_name: v.display_name, description: v.description ?? null, settings });
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
  const path = `${wsBase(p)}/waitlist/settings`;
  const s = useLoad(() => get(path), [path]);
  const domains = useLoad(() => (p.ws.services.includes("mail") ? get<{ data: any[] }>(`/mail/v1/workspaces/${p.ws.id}/domains`) : Promise.resolve({ data: [] })), [p.ws.id]);
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
              ? { name, label, type: "select" as const, initial: s.data[name] ?? "", options: [{ value: "", label: "(none)" }, ...sending.map((d) => ({ value: d.id, label: `${d.fqdn} (${d.status})` }))] }
              : { name, label, initial: s.data[name] ?? "" },
          ),
          { name: "notifications_via_mail", label: "Send the welcome, approved and rejected mails", type: "checkbox", initial: s.data.notifications_via_mail },
        ]}
        onSubmit={async (v) => {
          setSaved(false);
          // Empty fields clear their value (null), as the API reads them.
          const body = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, x === undefined ? null : x]));
          await api("PUT", path, body);
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
