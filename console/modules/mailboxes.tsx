/**
 * Mailboxes and received mail: mailboxes (create on a receiving domain, disable/enable,
 * delete), each mailbox's messages (filters, unread), and the reader: the raw message
 * parsed in the browser and its HTML sanitised (lib/mail-render.ts: postal-mime and
 * DOMPurify, remote resources blocked) and shown in a sandbox="" iframe, authentication and
 * spam verdict, attachments to download, mark read, delete.
 */
import { useEffect, useState } from "preact/hooks";
import { api, apiHref, getRaw, type BodyOf } from "../lib/api";
import { renderMail } from "../lib/mail-render";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Loading, PagedTable, SandboxedHtml, Section, Table, useLoad, when } from "../lib/ui";

import { mail } from "./mail-outbox";
const verdictTone = (v: string) => (v === "clean" ? "ok" : v === "spam" ? "bad" : "warn");
const authTone = (v: string) => (v === "pass" ? "ok" : ["fail", "softfail", "permerror"].includes(v) ? "bad" : "info");
const kb = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`);

function Mailboxes(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const domains = useLoad(() => api.get("/mail/v1/workspaces/{workspace_id}/domains", { path: mail(p) }), [p.ws.id]);
  if (p.rest[0]) return p.rest[1] ? <Reader p={p} box={p.rest[0]} id={p.rest[1]} /> : <Messages p={p} box={p.rest[0]} />;
  const receiving = (domains.data?.data ?? []).filter((d) => d.intent !== "send");
  const refresh = () => setTick((t) => t + 1);
  return (
    <>
      <Section title="Mailboxes">
        <PagedTable
          label="Mailboxes"
          path="/mail/v1/workspaces/{workspace_id}/mailboxes"
          params={mail(p)}
          reloadKey={tick}
          empty="No mailbox yet."
          onRow={(b) => go(p.href("mailboxes", b.id))}
          columns={[
            { label: "Address", cell: (b) => <a href={p.href("mailboxes", b.id)}>{b.address}</a> },
            { label: "Name", cell: (b) => b.display_name ?? "—" },
            { label: "Status", cell: (b) => <Badge text={b.status} tone={b.status === "active" ? "ok" : "warn"} /> },
            { label: "Retention", cell: (b) => `${b.retention_days} days` },
            {
              label: "",
              cell: (b) => (
                <span class="row-actions">
                  <ActionButton label={b.status === "active" ? "Disable" : "Enable"} run={async () => (await api.patch("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}", { path: { ...mail(p), id: b.id }, body: { status: b.status === "active" ? "disabled" : "active" } }), refresh())} />
                  <ConfirmButton label="Delete" onConfirm={async () => (await api.delete("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}", { path: { ...mail(p), id: b.id } }), refresh())} />
                </span>
              ),
            },
          ]}
        />
      </Section>
      <Section title="Create a mailbox">
        <ErrorNote error={domains.error} />
        {!domains.data ? (
          !domains.error && <Loading />
        ) : receiving.length === 0 ? (
          <p class="muted">
            No receiving domain yet: add one with use <code>receive</code> or <code>send_receive</code> under <a href={`#/w/${p.ws.slug}/mail/domains`}>Domains</a>.
          </p>
        ) : (
          <Form
            id="create-mailbox"
            submitLabel="Create mailbox"
            resetOnSuccess
            fields={[
              { name: "domain_id", label: "Domain", type: "select", options: receiving.map((d) => ({ value: d.id, label: `${d.fqdn} (${d.status})` })) },
              { name: "local_part", label: "Local part", required: true, placeholder: "support" },
              { name: "display_name", label: "Display name" },
              { name: "retention_days", label: "Retention (days)", type: "number", placeholder: "30" },
            ]}
            onSubmit={async (v) => (await api.post("/mail/v1/workspaces/{workspace_id}/mailboxes", { path: mail(p), body: v as BodyOf<"post", "/mail/v1/workspaces/{workspace_id}/mailboxes"> }), refresh())}
          />
        )}
      </Section>
    </>
  );
}

function Messages({ p, box }: { p: ScreenProps; box: string }) {
  const mb = useLoad(() => api.get("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}", { path: { ...mail(p), id: box } }), [box]);
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  const [tick, setTick] = useState(0);
  return (
    <>
      <p>
        <a href={p.href("mailboxes")}>← All mailboxes</a>
      </p>
      <ErrorNote error={mb.error} />
      <Section title="Filter messages">
        <Form
          id="received-filters"
          inline
          submitLabel="Apply"
          fields={[
            { name: "from", label: "From contains" },
            { name: "subject", label: "Subject contains" },
            { name: "unread", label: "Read", type: "select", options: [{ value: "", label: "any" }, { value: "true", label: "unread" }, { value: "false", label: "read" }] },
          ]}
          onSubmit={async (v) => setFilters(v as Record<string, string | undefined>)}
        />
      </Section>
      <Section title={mb.data ? `Inbox of ${mb.data.address}` : "Inbox"} actions={<ActionButton label="Refresh" run={async () => setTick((t) => t + 1)} />}>
        <PagedTable
          label="Received messages"
          path="/mail/v1/workspaces/{workspace_id}/mailboxes/{id}/messages" params={{ ...mail(p), id: box }}
          query={filters}
          reloadKey={tick}
          empty="No message."
          onRow={(m) => go(p.href("mailboxes", box, m.id))}
          columns={[
            { label: "Received", cell: (m) => when(m.received_at) },
            { label: "From", cell: (m) => m.from_address },
            { label: "Subject", cell: (m) => (m.read_at ? m.subject : <strong>{m.subject}</strong>) },
            { label: "Verdict", cell: (m) => <Badge text={m.quarantined ? `${m.spam_verdict}, quarantined` : m.spam_verdict} tone={verdictTone(m.spam_verdict)} /> },
            { label: "Size", cell: (m) => kb(m.size_bytes) },
          ]}
        />
      </Section>
    </>
  );
}

function Reader({ p, box, id }: { p: ScreenProps; box: string; id: string }) {
  const path = { ...mail(p), id: box, mid: id };
  const msg = useLoad(() => api.get("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}/messages/{mid}", { path }), [p.ws.id, box, id]);
  const [body, setBody] = useState<{ html: string; blocked: number } | null>(null);
  const [bodyError, setBodyError] = useState<Error | null>(null);
  useEffect(() => {
    // Fetch and parse the raw message; mark it read once opened.
    let live = true;
    void (async () => {
      try {
        const res = await getRaw("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}/messages/{mid}/raw", { path });
        const out = await renderMail(await res.arrayBuffer());
        if (live) setBody(out);
      } catch (e) {
        if (live) setBodyError(e as Error);
      }
    })();
    void api.post("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}/messages/{mid}/read", { path }).catch(() => {});
    return () => void (live = false);
  }, [p.ws.id, box, id]);
  if (msg.error) return <ErrorNote error={msg.error} />;
  const m = msg.data;
  if (!m) return <Loading />;
  return (
    <>
      <p>
        <a href={p.href("mailboxes", box)}>← Inbox</a>
      </p>
      <Section title={m.subject || "(no subject)"} actions={<Badge text={m.spam_verdict} tone={verdictTone(m.spam_verdict)} />}>
        <dl class="facts">
          <dt>From</dt>
          <dd>{m.from_address}</dd>
          <dt>To</dt>
          <dd>{[...m.to_addresses, ...m.cc_addresses].join(", ") || m.envelope_to}</dd>
          <dt>Received</dt>
          <dd>{when(m.received_at)}</dd>
          <dt>Authentication</dt>
          <dd>
            SPF <Badge text={m.spf_result} tone={authTone(m.spf_result)} /> DKIM <Badge text={m.dkim_result} tone={authTone(m.dkim_result)} /> DMARC <Badge text={m.dmarc_result} tone={authTone(m.dmarc_result)} />
          </dd>
          <dt>Spam score</dt>
          <dd>
            {m.spam_score}
            {m.spam_rules.length > 0 && <span class="muted"> ({m.spam_rules.map((r) => `${r.rule} ${r.score}`).join(", ")})</span>}
            {m.quarantined && <Badge text="quarantined" tone="bad" />}
          </dd>
        </dl>
        <div class="row-actions">
          <a class="button-link" href={apiHref("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}/messages/{mid}/raw", { path })} download>
            Download .eml
          </a>
          <ConfirmButton label="Delete message" onConfirm={async () => (await api.delete("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}/messages/{mid}", { path }), go(p.href("mailboxes", box)))} />
        </div>
      </Section>
      <Section title="Message">
        <ErrorNote error={bodyError} />
        {body ? (
          <>
            {body.blocked > 0 && (
              <p class="notice" role="status" data-testid="blocked-note">
                {body.blocked} remote {body.blocked === 1 ? "resource" : "resources"} blocked.
              </p>
            )}
            <SandboxedHtml title="Received message" html={body.html} />
          </>
        ) : (
          !bodyError && <Loading what="Reading the message" />
        )}
      </Section>
      <Section title="Attachments">
        <Table
          label="Attachments"
          rows={m.attachments}
          empty="No attachment."
          columns={[
            { label: "File", cell: (a) => <a href={apiHref("/mail/v1/workspaces/{workspace_id}/mailboxes/{id}/messages/{mid}/attachments/{position}", { path: { ...path, position: String(a.position) } })} download={a.filename ?? `attachment-${a.position}`}>{a.filename ?? `attachment ${a.position}`}</a> },
            { label: "Type", cell: (a) => a.content_type + (a.content_id ? " (inline)" : "") },
            { label: "Size", cell: (a) => kb(a.size_bytes) },
            { label: "SHA-256", cell: (a) => <code class="clip">{a.sha256.slice(0, 16)}…</code> },
          ]}
        />
      </Section>
    </>
  );
}

export const mailboxesModule: ConsoleModule = {
  id: "inbox",
  title: "Mailboxes",
  scope: "workspace",
  service: "mail",
  screens: [{ id: "mailboxes", title: "Mailboxes", view: Mailboxes }],
};
