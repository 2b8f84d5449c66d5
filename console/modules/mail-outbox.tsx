/**
 * The mail sandbox in the console: the "Create sandbox domain" card and the sandbox badge of
 * the domains screen (mail.tsx), and the Dev outbox screen under Mail: what the workspace's
 * sandbox domain sent to addresses that are not mailboxes of this instance, caught and never
 * sent, with a reader that shows the HTML in a sandboxed iframe (no script, no same origin).
 * Everything here says plainly that the sandbox is for trying Bunker out, not for production.
 */
import { useState } from "preact/hooks";
import { api } from "../lib/api";
import type { Screen, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ErrorNote, Loading, PagedTable, SandboxedHtml, Section, useLoad, when } from "../lib/ui";

/** The path parameters of the workspace's mail routes. */
export const mail = (p: ScreenProps) => ({ workspace_id: p.ws.id });

export const SANDBOX_NOTE = "Sandbox — for trying Bunker out, not for production";

export function SandboxBadge() {
  return <Badge text={SANDBOX_NOTE} tone="warn" />;
}

/** The domains screen's card: make (or open) the workspace's sandbox domain. */
export function CreateSandboxDomain({ p, onDone }: { p: ScreenProps; onDone: () => void }) {
  return (
    <Section title="Try mail without DNS">
      <p class="muted">
        A sandbox domain works at once, without DNS records. Its mail never leaves this server: mail to a mailbox here is delivered into it, everything else is caught in the{" "}
        <a href={p.href("outbox")}>Dev outbox</a>. <SandboxBadge />
      </p>
      <ActionButton
        label="Create sandbox domain"
        kind="primary"
        run={async () => {
          const d = await api.post("/mail/v1/workspaces/{workspace_id}/domains/sandbox", { path: mail(p) });
          onDone();
          go(p.href("domains", d.id));
        }}
      />
    </Section>
  );
}

function Outbox(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  if (p.rest[0]) return <OutboxMessage p={p} id={p.rest[0]} />;
  return (
    <Section
      title="Dev outbox"
      actions={
        <span class="row-actions">
          <SandboxBadge />
          <ActionButton label="Refresh" run={async () => setTick((t) => t + 1)} />
        </span>
      }
    >
      <p class="muted">
        Mail the sandbox domain sent to addresses that are not mailboxes of this server: caught here, never sent. The newest 1,000 are kept. Mail to a mailbox here is under{" "}
        <a href={`#/w/${p.ws.slug}/mailboxes/mailboxes`}>Mailboxes</a>.
      </p>
      <PagedTable
        label="Dev outbox"
        path="/mail/v1/workspaces/{workspace_id}/outbox" params={mail(p)}
        reloadKey={tick}
        empty="Nothing caught yet. Send from an address on the sandbox domain to see it here."
        onRow={(m) => go(p.href("outbox", m.id))}
        columns={[
          { label: "Caught", cell: (m) => when(m.created_at) },
          { label: "To", cell: (m) => m.to },
          { label: "Subject", cell: (m) => <a href={p.href("outbox", m.id)}>{m.subject}</a> },
          { label: "From", cell: (m) => m.from },
        ]}
      />
    </Section>
  );
}

function OutboxMessage({ p, id }: { p: ScreenProps; id: string }) {
  const { data: m, error } = useLoad(() => api.get("/mail/v1/workspaces/{workspace_id}/outbox/{id}", { path: { ...mail(p), id } }), [id]);
  return (
    <>
      <p>
        <a href={p.href("outbox")}>← Dev outbox</a>
      </p>
      <ErrorNote error={error} />
      {!m ? (
        !error && <Loading />
      ) : (
        <Section title={m.subject} actions={<SandboxBadge />}>
          <dl class="facts">
            <dt>From</dt>
            <dd>{m.from}</dd>
            <dt>To</dt>
            <dd>{m.to}</dd>
            <dt>Caught</dt>
            <dd>{when(m.created_at)}</dd>
            <dt>Message</dt>
            <dd>
              <code>{m.message_id}</code> in the <a href={p.href("messages")}>message log</a>
            </dd>
          </dl>
          {!m.body_visible ? (
            <p class="muted">Reading bodies needs the mail.message.body.read permission.</p>
          ) : m.redacted ? (
            <p class="muted">No body was kept: the workspace redacts message bodies.</p>
          ) : m.html !== null ? (
            <SandboxedHtml title="Captured message" html={m.html} />
          ) : (
            <pre class="json">{m.text}</pre>
          )}
        </Section>
      )}
    </>
  );
}

export const outboxScreen: Screen = { id: "outbox", title: "Dev outbox", view: Outbox };
