/**
 * Mail: domains with their DNS records (copy buttons) and live check, brand editor with a
 * preview, template editor with a live render preview and lint, the message log with
 * filters, the timeline chart and the deliverability verdict, suppressions.
 * Previews render in sandboxed iframes (no script, no same origin, remote images blocked by the CSP).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, apiHref, type AnswerOf, type BodyOf, type Get, type QueryOf } from "../lib/api";
import { Chart } from "../lib/chart";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, CopyButton, ErrorNote, Form, Json, Loading, PagedTable, SandboxedHtml, Section, Table, useLoad, when } from "../lib/ui";
import { CreateSandboxDomain, mail, outboxScreen, SandboxBadge } from "./mail-outbox";

const tone = (s: string) => (["active", "sent", "delivered", "healthy", "pass"].includes(s) ? "ok" : ["failed", "bounced", "complained", "blocked", "fail"].includes(s) ? "bad" : "warn");

function Domains(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const list = useLoad(() => api.get("/mail/v1/workspaces/{workspace_id}/domains", { path: mail(p) }), [p.ws.id, tick]);
  const open = p.rest[0];
  if (open) return <DomainDetail p={p} id={open} />;
  return (
    <>
      <Section title="Domains">
        <ErrorNote error={list.error} />
        <Table
          label="Domains"
          rows={list.data?.data ?? []}
          empty={list.loading ? "Loading…" : "No domain yet."}
          columns={[
            { label: "Domain", cell: (d) => <><a href={p.href("domains", d.id)}>{d.fqdn}</a>{d.sandbox && <> <SandboxBadge /></>}</> },
            { label: "Use", cell: (d) => d.intent },
            { label: "Status", cell: (d) => <Badge text={d.status} tone={tone(d.status)} /> },
            { label: "Last check", cell: (d) => when(d.last_dns_check_at) },
          ]}
        />
      </Section>
      {list.data && !list.data.data.some((d) => d.sandbox) && <CreateSandboxDomain p={p} onDone={() => setTick(tick + 1)} />}
      <Section title="Add a domain">
        <Form
          id="add-domain"
          submitLabel="Add domain"
          resetOnSuccess
          fields={[
            { name: "fqdn", label: "Domain", required: true, placeholder: "mail.example.com" },
            { name: "intent", label: "Use", type: "select", options: ["send", "receive", "send_receive"].map((v) => ({ value: v, label: v })) },
          ]}
          onSubmit={async (v) => {
            const d = await api.post("/mail/v1/workspaces/{workspace_id}/domains", { path: mail(p), body: v as BodyOf<"post", "/mail/v1/workspaces/{workspace_id}/domains"> });
            setTick(tick + 1);
            go(p.href("domains", d.id));
          }}
        />
      </Section>
    </>
  );
}

function DomainDetail({ p, id }: { p: ScreenProps; id: string }) {
  const [d, setD] = useState<Get<"/mail/v1/workspaces/{workspace_id}/domains/{domain_id}"> | null>(null);
  const at = { ...mail(p), domain_id: id };
  const { data, error } = useLoad(() => api.get("/mail/v1/workspaces/{workspace_id}/domains/{domain_id}", { path: at }), [id]);
  const dom = d ?? data;
  if (error) return <ErrorNote error={error} />;
  if (!dom) return <Loading />;
  const checks = dom.dns_check_results ?? {};
  return (
    <>
      <p>
        <a href={p.href("domains")}>← All domains</a>
      </p>
      <Section title={dom.fqdn} actions={<Badge text={dom.status} tone={tone(dom.status)} />}>
        {dom.sandbox && (
          <p>
            <SandboxBadge /> No DNS needed: mail to a mailbox here is delivered into it, everything else is caught in the <a href={p.href("outbox")}>Dev outbox</a>.
          </p>
        )}
        <p class="muted" hidden={dom.sandbox}>
          Add these records at your DNS provider, then check. Last check: {when(dom.last_dns_check_at)}
          {dom.test_address && (
            <>
              {" "}
              · test address <code>{dom.test_address}</code>
            </>
          )}
        </p>
        {!dom.sandbox && <Table
          label="DNS records"
          rows={dom.dns_instructions ?? []}
          columns={[
            { label: "Purpose", cell: (r) => r.purpose + (r.required ? "" : " (optional)") },
            { label: "Type", cell: (r) => r.type },
            { label: "Host", cell: (r) => <span class="copyable"><code>{r.host}</code> <CopyButton text={r.host} /></span> },
            { label: "Value", cell: (r) => <span class="copyable"><code class="clip">{r.value}</code> <CopyButton text={r.value} /></span> },
            { label: "Check", cell: (r) => (checks[r.purpose] ? <Badge text={checks[r.purpose].found ? "found" : "missing"} tone={checks[r.purpose].found ? "ok" : "bad"} /> : "not checked") },
          ]}
        />}
        <div class="row-actions">
          <ActionButton label="Check DNS now" kind="primary" run={async () => setD(await api.post("/mail/v1/workspaces/{workspace_id}/domains/{domain_id}/verify", { path: at }))} />
          <ConfirmButton label="Rotate DKIM key" danger={false} onConfirm={async () => setD(await api.post("/mail/v1/workspaces/{workspace_id}/domains/{domain_id}/dkim/rotate", { path: at }))} />
          <ConfirmButton label="Delete domain" onConfirm={async () => (await api.delete("/mail/v1/workspaces/{workspace_id}/domains/{domain_id}", { path: at }), go(p.href("domains")))} />
        </div>
      </Section>
    </>
  );
}

/** The brand tokens the form edits, with their labels and what the API accepts. */
const BRAND_FIELDS: { name: string; label: string; hint?: string }[] = [
  { name: "brand_name", label: "Brand name", hint: "Empty: the workspace's display name." },
  { name: "logo_url", label: "Logo URL", hint: "An https URL." },
  { name: "primary_color", label: "Primary colour", hint: "Buttons and links, #RRGGBB." },
  { name: "secondary_color", label: "Secondary colour", hint: "Accents, #RRGGBB." },
  { name: "text_color", label: "Text colour", hint: "Body text, #RRGGBB." },
  { name: "background_color", label: "Background colour", hint: "Around the message, #RRGGBB." },
  { name: "card_background_color", label: "Card background colour", hint: "Behind the content, #RRGGBB." },
  { name: "button_radius", label: "Button corner radius", hint: "A CSS length: px, em, rem or %." },
  { name: "footer_address", label: "Footer postal address" },
];
/** What the brand preview renders: the brand tokens and the footer partial around a short message. */
const BRAND_SAMPLE = {
  subject: "Brand preview",
  body_html:
    '<div style="background:{{brand.background_color}};padding:24px;font-family:{{brand.font_stack}}"><div style="background:{{brand.card_background_color}};max-width:600px;margin:0 auto;padding:24px;color:{{brand.text_color}}">' +
    '<h1 style="color:{{brand.primary_color}};margin-top:0">{{brand.brand_name}}</h1><p>Hello {{name}}, this is how your mails look.</p>' +
    '<p><a href="https://example.com" style="display:inline-block;background:{{brand.primary_color}};color:#fff;padding:10px 16px;border-radius:{{brand.button_radius}};text-decoration:none">A button</a></p>' +
    '<p style="color:{{brand.muted_text_color}}">Muted text.</p></div>{{> bp.footer}}</div>',
  data: { name: "Ada" },
};
const SAMPLE = { subject: "Welcome, {{name}}", body_html: "<h1>Hello {{name}}</h1><p>Thanks for joining.</p>", body_text: "Hello {{name}}", data: { name: "Ada" } };

function Brand(p: ScreenProps) {
  const { data, error, reload } = useLoad(() => api.get("/mail/v1/workspaces/{workspace_id}/brand", { path: mail(p) }), [p.ws.id]);
  const [preview, setPreview] = useState<string | null>(null);
  useEffect(() => {
    if (data) void api.post("/mail/v1/workspaces/{workspace_id}/templates/preview", { path: mail(p), body: BRAND_SAMPLE }).then((r) => setPreview(r.html), () => setPreview(null));
  }, [data]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return <Loading />;
  return (
    <div class="split">
      <Section title="Brand">
        <Form
          key={JSON.stringify(data.raw)}
          id="brand"
          submitLabel="Save brand"
          fields={BRAND_FIELDS.map((f) => ({ ...f, initial: (data.raw as Record<string, unknown>)[f.name] ?? "", placeholder: String((data.resolved as Record<string, unknown>)[f.name] ?? "") }))}
          onSubmit={async (v) => {
            const body = Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined));
            await api.put("/mail/v1/workspaces/{workspace_id}/brand", { path: mail(p), body: body as BodyOf<"put", "/mail/v1/workspaces/{workspace_id}/brand"> });
            reload();
          }}
        />
        <ConfirmButton label="Reset to defaults" onConfirm={async () => (await api.delete("/mail/v1/workspaces/{workspace_id}/brand", { path: mail(p) }), reload())} />
      </Section>
      <Section title="Preview">{preview === null ? <Loading what="Rendering" /> : <SandboxedHtml title="Brand preview" html={preview} />}</Section>
    </div>
  );
}

function Templates(p: ScreenProps) {
  const open = p.rest[0];
  if (open) return <TemplateEditor p={p} name={open === "new" ? null : open} />;
  return (
    <>
      <p>
        <a class="button-link" href={p.href("templates", "new")}>
          New template
        </a>
      </p>
      <Section title="Templates">
        <PagedTable
          label="Templates"
          path="/mail/v1/workspaces/{workspace_id}/templates" params={mail(p)}
          columns={[
            { label: "Name", cell: (t) => <a href={p.href("templates", t.name)}>{t.name}</a> },
            { label: "Kind", cell: (t) => t.kind },
            { label: "Subject", cell: (t) => t.subject },
            { label: "Tags", cell: (t) => (t.tags ?? []).join(", ") },
            { label: "Updated", cell: (t) => when(t.updated_at) },
          ]}
        />
      </Section>
    </>
  );
}

interface Draft {
  name: string;
  kind: BodyOf<"post", "/mail/v1/workspaces/{workspace_id}/templates">["kind"];
  subject: string;
  body_html: string;
  body_text: string;
  data: string;
}

function TemplateEditor({ p, name }: { p: ScreenProps; name: string | null }) {
  const existing = useLoad(() => (name ? api.get("/mail/v1/workspaces/{workspace_id}/templates/{name}", { path: { ...mail(p), name } }) : Promise.resolve(null)), [name]);
  if (existing.error) return <ErrorNote error={existing.error} />;
  if (name && !existing.data) return <Loading />;
  const t = existing.data;
  const initial: Draft = t
    ? { name: t.name, kind: t.kind, subject: t.subject ?? "", body_html: t.body_html ?? "", body_text: t.body_text_derived ? "" : (t.body_text ?? ""), data: "{}" }
    : { name: "", kind: "template", subject: SAMPLE.subject, body_html: SAMPLE.body_html, body_text: SAMPLE.body_text, data: JSON.stringify(SAMPLE.data, null, 2) };
  return <Editor key={name ?? "new"} p={p} initial={initial} isNew={!t} />;
}

function Editor({ p, initial, isNew }: { p: ScreenProps; initial: Draft; isNew: boolean }) {
  const [draft, setDraft] = useState<Draft>(initial);
  const [render, setRender] = useState<{ subject: string; html: string } | null>(null);
  const [lint, setLint] = useState<AnswerOf<"post", "/mail/v1/workspaces/{workspace_id}/templates/lint"> | null>(null);
  const [renderError, setRenderError] = useState<Error | null>(null);
  const [saveError, setSaveError] = useState<Error | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [vars, setVars] = useState<unknown>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const set = (k: keyof Draft) => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });

  // Live preview and lint, 300 ms after the last keystroke.
  useEffect(() => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(async () => {
      let data: Record<string, unknown> = {};
      try {
        data = JSON.parse(draft.data || "{}") as Record<string, unknown>;
      } catch {
        return setRenderError(new Error("Sample data is not valid JSON"));
      }
      const body = { subject: draft.subject, body_html: draft.body_html, body_text: draft.body_text || undefined, data };
      try {
        const [r, l] = await Promise.all([api.post("/mail/v1/workspaces/{workspace_id}/templates/preview", { path: mail(p), body }), api.post("/mail/v1/workspaces/{workspace_id}/templates/lint", { path: mail(p), body })]);
        setRender(r);
        setLint(l);
        setRenderError(null);
      } catch (e) {
        setRenderError(e as Error);
      }
    }, 300);
    return () => timer.current && clearTimeout(timer.current);
  }, [draft.subject, draft.body_html, draft.body_text, draft.data]);

  const save = async (e: Event) => {
    e.preventDefault();
    setSaveError(null);
    try {
      const t = await api.post("/mail/v1/workspaces/{workspace_id}/templates", { path: mail(p), body: { name: draft.name, kind: draft.kind, subject: draft.subject, body_html: draft.body_html, body_text: draft.body_text || undefined } });
      setSaved(t.name);
      setVars(await api.get("/mail/v1/workspaces/{workspace_id}/templates/{name}/variables", { path: { ...mail(p), name: t.name } }));
      if (isNew) go(p.href("templates", t.name));
    } catch (err) {
      setSaveError(err as Error);
    }
  };
  return (
    <>
      <p>
        <a href={p.href("templates")}>← All templates</a>
      </p>
      <div class="split">
        <Section title={isNew ? "New template" : `Template ${initial.name}`}>
          <form class="form" onSubmit={save}>
            <div class="field">
              <label for="tpl-name">Name</label>
              <input id="tpl-name" value={draft.name} readOnly={!isNew} onInput={set("name")} />
            </div>
            <div class="field">
              <label for="tpl-kind">Kind</label>
              <select id="tpl-kind" value={draft.kind} disabled={!isNew} onChange={set("kind")}>
                {["template", "layout", "partial"].map((k) => (
                  <option value={k}>{k}</option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="tpl-subject">Subject</label>
              <input id="tpl-subject" value={draft.subject} onInput={set("subject")} />
            </div>
            <div class="field">
              <label for="tpl-html">HTML body</label>
              <textarea id="tpl-html" rows={10} spellcheck={false} value={draft.body_html} onInput={set("body_html")} />
            </div>
            <div class="field">
              <label for="tpl-text">Text body (optional: derived from the HTML)</label>
              <textarea id="tpl-text" rows={4} spellcheck={false} value={draft.body_text} placeholder="Left empty, each mail's text part is derived from its HTML" onInput={set("body_text")} />
            </div>
            <div class="field">
              <label for="tpl-data">Sample data (JSON, for the preview)</label>
              <textarea id="tpl-data" rows={4} spellcheck={false} value={draft.data} onInput={set("data")} />
            </div>
            <div class="actions">
              <button type="submit">Save template</button>
            </div>
            <ErrorNote error={saveError} />
            {saved && (
              <p class="notice" role="status">
                Saved {saved}.
              </p>
            )}
            {vars !== null && (
              <>
                <h3>Variables</h3>
                <Json value={vars} />
              </>
            )}
          </form>
        </Section>
        <div>
          <Section title="Lint">
            {lint ? (
              <>
                <p>
                  Score <span class="score" data-testid="lint-score">{lint.score}</span>/100
                </p>
                <ul class="findings">
                  {lint.findings.map((f) => (
                    <li>
                      <Badge text={f.severity} tone={f.severity === "error" ? "bad" : f.severity === "warning" ? "warn" : "info"} /> {f.message}
                      {f.suggestion && <span class="muted"> — {f.suggestion}</span>}
                    </li>
                  ))}
                </ul>
              </>
            ) : (
              <Loading what="Linting" />
            )}
          </Section>
          <Section title="Preview">
            <ErrorNote error={renderError} />
            {render && (
              <>
                <p>
                  Subject: <strong data-testid="preview-subject">{render.subject}</strong>
                </p>
                <SandboxedHtml title="Template preview" html={render.html} />
              </>
            )}
          </Section>
        </div>
      </div>
    </>
  );
}

const STATUSES = ["", "queued", "sending", "sent", "delivered", "deferred", "bounced", "complained", "failed"];

function Messages(p: ScreenProps) {
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  const [open, setOpen] = useState<Get<"/mail/v1/workspaces/{workspace_id}/messages">["data"][number] | null>(null);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const since = day(Date.now() - 30 * 86_400_000);
  const until = day(Date.now() + 86_400_000);
  const timeline = useLoad(() => Promise.all((["sent", "bounced"] as const).map((metric) => api.get("/mail/v1/workspaces/{workspace_id}/messages/timeline", { path: mail(p), query: { granularity: "day", metric, since, until } }))), [p.ws.id]);
  const verdict = useLoad(() => api.get("/mail/v1/workspaces/{workspace_id}/deliverability", { path: mail(p) }), [p.ws.id]);
  const x = timeline.data?.[0]?.points.map((pt) => Date.parse(pt.date) / 1000) ?? [];
  return (
    <>
      <div class="split">
        <Section title="Deliverability (last window)">
          <ErrorNote error={verdict.error} />
          {verdict.data ? (
            <>
              <p>
                <Badge text={verdict.data.verdict} tone={tone(verdict.data.verdict)} /> <span data-testid="verdict-summary">{verdict.data.summary}</span>
              </p>
              <dl class="facts">
                <dt>Left the queue</dt>
                <dd>{verdict.data.left_queue}</dd>
                <dt>Confirmed</dt>
                <dd>{verdict.data.confirmed}</dd>
                <dt>Bounced</dt>
                <dd>{verdict.data.bounced}</dd>
                <dt>Deferred</dt>
                <dd>{verdict.data.deferred}</dd>
              </dl>
            </>
          ) : (
            <Loading />
          )}
        </Section>
        <Section title="Timeline (30 days)">
          <ErrorNote error={timeline.error} />
          {timeline.data ? (
            <Chart title="Messages per day" x={x} series={[{ label: "sent", values: timeline.data[0]!.points.map((pt) => Number(pt.count)) }, { label: "bounced", values: timeline.data[1]!.points.map((pt) => Number(pt.count)) }]} />
          ) : (
            <Loading />
          )}
        </Section>
      </div>
      <Section title="Filters">
        <Form
          id="message-filters"
          inline
          submitLabel="Apply"
          fields={[
            { name: "recipient", label: "Recipient" },
            { name: "template", label: "Template" },
            { name: "status", label: "Status", type: "select", options: STATUSES.map((s) => ({ value: s, label: s || "any" })) },
            { name: "subject_contains", label: "Subject contains" },
          ]}
          onSubmit={async (v) => setFilters(v as Record<string, string | undefined>)}
        />
      </Section>
      <Section title="Messages" actions={<a href={apiHref("/mail/v1/workspaces/{workspace_id}/messages/export", { path: mail(p), query: filters as QueryOf<"/mail/v1/workspaces/{workspace_id}/messages/export"> })} download="messages.csv">Export CSV</a>}>
        <PagedTable
          label="Messages"
          path="/mail/v1/workspaces/{workspace_id}/messages" params={mail(p)}
          query={filters}
          onRow={setOpen}
          columns={[
            { label: "When", cell: (m) => when(m.created_at) },
            { label: "To", cell: (m) => m.to_address },
            { label: "Subject", cell: (m) => m.subject },
            { label: "Template", cell: (m) => m.template_name ?? "—" },
            { label: "Status", cell: (m) => <Badge text={m.status} tone={tone(m.status)} /> },
          ]}
        />
      </Section>
      {open && (
        <Section title="Message" actions={<button type="button" class="secondary small" onClick={() => setOpen(null)}>Close</button>}>
          <Json value={open} />
        </Section>
      )}
    </>
  );
}

function Suppressions(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const [reason, setReason] = useState("");
  return (
    <>
      <Section title="Suppress an address">
        <Form
          id="add-suppression"
          submitLabel="Suppress"
          resetOnSuccess
          fields={[
            { name: "email", label: "Email", type: "email", required: true },
            { name: "reason", label: "Reason", type: "select", options: ["manual", "bounce", "complaint", "unsubscribe"].map((v) => ({ value: v, label: v })) },
          ]}
          onSubmit={async (v) => (await api.post("/mail/v1/workspaces/{workspace_id}/suppressions", { path: mail(p), body: v as BodyOf<"post", "/mail/v1/workspaces/{workspace_id}/suppressions"> }), setTick(tick + 1))}
        />
      </Section>
      <Section
        title="Suppressed addresses"
        actions={
          <select aria-label="Filter by reason" value={reason} onChange={(e) => setReason((e.target as HTMLSelectElement).value)}>
            {["", "manual", "bounce", "complaint", "unsubscribe"].map((r) => (
              <option value={r}>{r || "any reason"}</option>
            ))}
          </select>
        }
      >
        <PagedTable
          label="Suppressions"
          path="/mail/v1/workspaces/{workspace_id}/suppressions" params={mail(p)}
          query={{ reason: reason || undefined }}
          reloadKey={tick}
          columns={[
            { label: "Email", cell: (s) => s.email },
            { label: "Reason", cell: (s) => s.reason },
            { label: "Since", cell: (s) => when(s.created_at) },
            { label: "", cell: (s) => <ConfirmButton label="Remove" onConfirm={async () => (await api.delete("/mail/v1/workspaces/{workspace_id}/suppressions/{email}", { path: { ...mail(p), email: s.email } }), setTick(tick + 1))} /> },
          ]}
        />
      </Section>
    </>
  );
}

export const mailModule: ConsoleModule = {
  id: "mail",
  title: "Mail",
  scope: "workspace",
  service: "mail",
  screens: [
    { id: "domains", title: "Domains", view: Domains },
    { id: "brand", title: "Brand", view: Brand },
    { id: "templates", title: "Templates", view: Templates },
    { id: "messages", title: "Messages", view: Messages },
    outboxScreen,
    { id: "suppressions", title: "Suppressions", view: Suppressions },
  ],
};
