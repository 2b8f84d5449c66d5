/**
 * Card board (tack): board workspaces, projects with their lists, the board itself (cards
 * in list columns; drag and drop calls the move API, and every card has move buttons for
 * keyboard use), card detail with edits, complete/reopen, archive, comments and activity.
 *
 * The card board's routes take only workspace API keys (svc_live_...), not console
 * sessions. The screens ask for one: paste a key, or let the console create a key limited
 * to tack.* that expires in 12 hours (it shows under API keys and can be revoked there).
 * The key lives in this module's memory only, never in storage; a reload asks again.
 */
import { useState } from "preact/hooks";
import { api, ApiError, type FieldDetail } from "../lib/api";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Loading, Section, Table, useLoad, when } from "../lib/ui";

const ROOT = "/tack/api/v1/workspaces";
/** Platform workspace id -> card-board API key (memory only). */
const keys = new Map<string, string>();

/** A card-board call with the workspace's key: errors as ApiError; never the session's refresh or sign-out. */
async function board<T = any>(wsId: string, method: string, path: string, body?: unknown): Promise<T> {
  const key = keys.get(wsId);
  if (!key) throw new ApiError(401, "KEY_REQUIRED", "A card-board API key is needed");
  const res = await fetch(ROOT + path, {
    method,
    credentials: "omit",
    headers: { accept: "application/json", authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) {
    if (res.status === 401) keys.delete(wsId);
    const e = (json?.error ?? {}) as { code?: string; message?: string; details?: FieldDetail[] };
    throw new ApiError(res.status, e.code ?? `HTTP_${res.status}`, e.message ?? res.statusText, e.details ?? []);
  }
  return json as T;
}

const enc = encodeURIComponent;

function KeyGate({ p, onKey }: { p: ScreenProps; onKey: () => void }) {
  const check = async (key: string) => {
    keys.set(p.ws.id, key);
    try {
      await board(p.ws.id, "GET", "?limit=1");
    } catch (e) {
      keys.delete(p.ws.id);
      throw e;
    }
    onKey();
  };
  return (
    <Section title="Card-board API key">
      <p class="muted">
        The card board's API takes a workspace API key, not a console session. The key stays in this page's memory only: a reload asks again.
      </p>
      <div class="row-actions">
        <ActionButton
          label="Create a 12-hour key for this session"
          kind="primary"
          run={async () => {
            const expires = new Date(Date.now() + 12 * 3600_000).toISOString();
            const k = await api<{ key: string }>("POST", `/platform/v1/workspaces/${enc(p.ws.slug)}/api-keys`, {
              name: `Admin console card board (${new Date().toISOString().slice(0, 16).replace("T", " ")})`,
              policy: [{ effect: "allow", actions: ["tack.*"], resources: ["*"] }],
              expires_at: expires,
            });
            await check(k.key);
          }}
        />
      </div>
      <Form id="board-key" submitLabel="Use this key" fields={[{ name: "key", label: "Or paste an API key", type: "password", required: true, placeholder: "svc_live_..." }]} onSubmit={(v) => check(String(v.key ?? ""))} />
    </Section>
  );
}

function Boards(p: ScreenProps) {
  const [, setHasKey] = useState(0);
  if (!keys.has(p.ws.id)) return <KeyGate p={p} onKey={() => setHasKey((n) => n + 1)} />;
  const [wsRef, project, card] = p.rest;
  if (wsRef && project && card) return <CardDetail p={p} ws={wsRef} project={project} id={card} />;
  if (wsRef && project) return <BoardView p={p} ws={wsRef} project={project} />;
  if (wsRef) return <Projects p={p} ws={wsRef} />;
  return <Workspaces p={p} />;
}

function Workspaces({ p }: { p: ScreenProps }) {
  const list = useLoad(() => board(p.ws.id, "GET", "?limit=100"), [p.ws.id]);
  return (
    <>
      <Section title="Board workspaces">
        <ErrorNote error={list.error} />
        <Table
          label="Board workspaces"
          rows={list.data?.data ?? []}
          empty={list.loading ? "Loading…" : "No board workspace yet."}
          onRow={(w: any) => go(p.href("boards", w.name))}
          columns={[
            { label: "Name", cell: (w: any) => <a href={p.href("boards", w.name)}>{w.display_name}</a> },
            { label: "Slug", cell: (w: any) => <code>{w.name}</code> },
            { label: "Created", cell: (w: any) => when(w.created_at) },
          ]}
        />
      </Section>
      <Section title="Create a board workspace">
        <Form
          id="create-board-ws"
          submitLabel="Create workspace"
          resetOnSuccess
          fields={[
            { name: "name", label: "Name", required: true, hint: "1-64 of a-z, 0-9 and '-'." },
            { name: "display_name", label: "Display name" },
          ]}
          onSubmit={async (v) => {
            const w = await board(p.ws.id, "POST", "", v);
            go(p.href("boards", w.name));
          }}
        />
      </Section>
    </>
  );
}

function Projects({ p, ws }: { p: ScreenProps; ws: string }) {
  const list = useLoad(() => board(p.ws.id, "GET", `/${enc(ws)}/projects?limit=100`), [ws]);
  return (
    <>
      <p>
        <a href={p.href("boards")}>← Board workspaces</a>
      </p>
      <Section title={`Projects of ${ws}`}>
        <ErrorNote error={list.error} />
        <Table
          label="Projects"
          rows={list.data?.data ?? []}
          empty={list.loading ? "Loading…" : "No project yet."}
          onRow={(pr: any) => go(p.href("boards", ws, pr.name))}
          columns={[
            { label: "Project", cell: (pr: any) => <a href={p.href("boards", ws, pr.name)}>{pr.display_name}</a> },
            { label: "Lists", cell: (pr: any) => pr.lists.map((l: any) => l.display_name).join(" → ") },
            { label: "Status", cell: (pr: any) => <Badge text={pr.status} tone={pr.status === "active" ? "ok" : "warn"} /> },
          ]}
        />
      </Section>
      <Section title="Create a project">
        <Form
          id="create-project"
          submitLabel="Create project"
          resetOnSuccess
          fields={[
            { name: "name", label: "Name", required: true },
            { name: "display_name", label: "Display name" },
            { name: "lists", label: "Lists", initial: "todo, doing, done", hint: "Comma-separated list names, in order." },
          ]}
          onSubmit={async (v) => {
            const lists = String(v.lists ?? "").split(",").map((s) => s.trim()).filter(Boolean).map((name) => ({ name }));
            const pr = await board(p.ws.id, "POST", `/${enc(ws)}/projects`, { name: v.name, display_name: v.display_name, lists });
            go(p.href("boards", ws, pr.name));
          }}
        />
      </Section>
    </>
  );
}

/** Every active card of a project in board order (pages of 100). */
async function allCards(wsId: string, base: string): Promise<any[]> {
  const out: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await board(wsId, "GET", `${base}/cards?limit=100&offset=${offset}`);
    out.push(...page.data);
    if (!page.pagination.has_more || offset > 2000) return out;
  }
}

function BoardView({ p, ws, project }: { p: ScreenProps; ws: string; project: string }) {
  const base = `/${enc(ws)}/projects/${enc(project)}`;
  const data = useLoad(async () => ({ project: await board(p.ws.id, "GET", base), cards: await allCards(p.ws.id, base) }), [base]);
  const [dragging, setDragging] = useState<string | null>(null);
  const [moveError, setMoveError] = useState<Error | null>(null);
  const [status, setStatus] = useState("");
  if (data.error) return <ErrorNote error={data.error} />;
  if (!data.data) return <Loading />;
  const { project: pr, cards } = data.data;
  const lists: any[] = pr.lists;
  const inList = (id: string) => cards.filter((c) => c.list_id === id).sort((a, b) => a.position - b.position);
  const move = async (card: any, listId: string, position: number) => {
    setMoveError(null);
    try {
      const moved = await board(p.ws.id, "POST", `${base}/cards/${card.id}/move`, { list: listId, position });
      const list = lists.find((l) => l.id === moved.list_id);
      setStatus(`Moved "${card.title}" to ${list?.display_name ?? "?"}, position ${moved.position + 1}.`);
    } catch (e) {
      setMoveError(e as Error);
    }
    data.reload();
  };
  const drop = (listId: string, position: number) => (e: DragEvent) => {
    e.preventDefault();
    e.stopPropagation();
    const id = e.dataTransfer?.getData("text/plain") || dragging;
    setDragging(null);
    const card = cards.find((c) => c.id === id);
    if (card) void move(card, listId, position);
  };
  return (
    <>
      <p>
        <a href={p.href("boards", ws)}>← Projects of {ws}</a>
      </p>
      <h2>{pr.display_name}</h2>
      <ErrorNote error={moveError} />
      <p class="muted" role="status" aria-live="polite">
        {status}
      </p>
      <div class="kanban">
        {lists.map((l, li) => {
          const mine = inList(l.id);
          return (
            <section class="kanban-list" aria-label={`List ${l.display_name}`} onDragOver={(e) => e.preventDefault()} onDrop={drop(l.id, mine.length)}>
              <h3>
                {l.display_name} <span class="muted">({mine.length})</span>
              </h3>
              <ul>
                {mine.map((c, ci) => (
                  <li
                    class={dragging === c.id ? "kanban-card dragging" : "kanban-card"}
                    draggable
                    data-card={c.title}
                    onDragStart={(e) => (e.dataTransfer?.setData("text/plain", c.id), setDragging(c.id))}
                    onDragEnd={() => setDragging(null)}
                    onDragOver={(e) => e.preventDefault()}
                    onDrop={drop(l.id, ci)}
                  >
                    <a href={p.href("boards", ws, project, c.id)}>{c.title}</a>
                    <div class="kanban-meta">
                      {c.priority !== "none" && <Badge text={c.priority} tone={c.priority === "urgent" ? "bad" : c.priority === "high" ? "warn" : "info"} />}
                      {c.labels.map((lb: string) => (
                        <Badge text={lb} />
                      ))}
                      {c.completed_at && <Badge text="done" tone="ok" />}
                    </div>
                    <div class="kanban-moves" role="group" aria-label={`Move ${c.title}`}>
                      <button type="button" class="secondary small" aria-label={`Move ${c.title} to the previous list`} disabled={li === 0} onClick={() => move(c, lists[li - 1].id, inList(lists[li - 1].id).length)}>
                        ←
                      </button>
                      <button type="button" class="secondary small" aria-label={`Move ${c.title} up`} disabled={ci === 0} onClick={() => move(c, l.id, ci - 1)}>
                        ↑
                      </button>
                      <button type="button" class="secondary small" aria-label={`Move ${c.title} down`} disabled={ci === mine.length - 1} onClick={() => move(c, l.id, ci + 1)}>
                        ↓
                      </button>
                      <button type="button" class="secondary small" aria-label={`Move ${c.title} to the next list`} disabled={li === lists.length - 1} onClick={() => move(c, lists[li + 1].id, inList(lists[li + 1].id).length)}>
                        →
                      </button>
                    </div>
                  </li>
                ))}
              </ul>
              <Form
                id={`add-card-${l.name}`}
                inline
                resetOnSuccess
                submitLabel="Add card"
                fields={[{ name: "title", label: `New card in ${l.display_name}`, required: true }]}
                onSubmit={async (v) => (await board(p.ws.id, "POST", `${base}/cards`, { title: v.title ?? "", list: l.id }), data.reload())}
              />
            </section>
          );
        })}
      </div>
    </>
  );
}

function CardDetail({ p, ws, project, id }: { p: ScreenProps; ws: string; project: string; id: string }) {
  const base = `/${enc(ws)}/projects/${enc(project)}/cards/${enc(id)}`;
  const card = useLoad(() => board(p.ws.id, "GET", base), [base]);
  const comments = useLoad(() => board(p.ws.id, "GET", `${base}/comments?limit=100`), [base]);
  const activity = useLoad(() => board(p.ws.id, "GET", `${base}/activity?limit=50`), [base]);
  const proj = useLoad(() => board(p.ws.id, "GET", `/${enc(ws)}/projects/${enc(project)}`), [ws, project]);
  // List ids in the activity read as list names.
  const listName = Object.fromEntries(((proj.data?.lists ?? []) as any[]).map((l) => [l.id, l.display_name]));
  const show = (v: unknown) => (typeof v === "string" && listName[v] ? listName[v] : JSON.stringify(v));
  if (card.error) return <ErrorNote error={card.error} />;
  const c = card.data;
  if (!c) return <Loading />;
  const changed = () => (card.reload(), activity.reload());
  return (
    <>
      <p>
        <a href={p.href("boards", ws, project)}>← Board</a>
      </p>
      <div class="split">
        <Section title={c.title} actions={c.completed_at ? <Badge text="completed" tone="ok" /> : c.archived_at ? <Badge text="archived" tone="warn" /> : undefined}>
          <Form
            key={c.updated_at}
            id="card-edit"
            submitLabel="Save card"
            fields={[
              { name: "title", label: "Title", initial: c.title },
              { name: "body", label: "Body (markdown)", type: "textarea", rows: 5, initial: c.body },
              { name: "priority", label: "Priority", type: "select", initial: c.priority, options: ["none", "low", "medium", "high", "urgent"].map((x) => ({ value: x, label: x })) },
              { name: "labels", label: "Labels", initial: c.labels.join(", "), hint: "Comma-separated names of the workspace's labels." },
              { name: "due_at", label: "Due (ISO 8601)", initial: c.due_at ?? "" },
            ]}
            onSubmit={async (v) => {
              const labels = String(v.labels ?? "").split(",").map((s) => s.trim()).filter(Boolean);
              await board(p.ws.id, "PATCH", base, { title: v.title, body: v.body ?? "", priority: v.priority, labels, due_at: v.due_at ?? null });
              changed();
            }}
          />
          <div class="row-actions">
            {c.completed_at ? <ActionButton label="Reopen" run={async () => (await board(p.ws.id, "POST", `${base}/reopen`), changed())} /> : <ActionButton label="Complete" kind="primary" run={async () => (await board(p.ws.id, "POST", `${base}/complete`), changed())} />}
            {!c.archived_at && <ConfirmButton label="Archive card" onConfirm={async () => (await board(p.ws.id, "DELETE", base), go(p.href("boards", ws, project)))} />}
          </div>
        </Section>
        <div>
          <Section title="Comments">
            <ErrorNote error={comments.error} />
            <ul class="comments" aria-label="Comments">
              {(comments.data?.data ?? []).map((m: any) => (
                <li>
                  <span class="muted">
                    {when(m.created_at)} · {m.author_id}
                  </span>
                  <p>{m.body}</p>
                </li>
              ))}
            </ul>
            <Form id="add-comment" resetOnSuccess submitLabel="Comment" fields={[{ name: "body", label: "Comment", type: "textarea", rows: 3, required: true }]} onSubmit={async (v) => (await board(p.ws.id, "POST", `${base}/comments`, { body: v.body ?? "" }), comments.reload(), activity.reload())} />
          </Section>
          <Section title="Activity">
            <ErrorNote error={activity.error} />
            <Table
              label="Activity"
              rows={activity.data?.data ?? []}
              columns={[
                { label: "When", cell: (a: any) => when(a.timestamp) },
                { label: "Action", cell: (a: any) => a.action },
                { label: "Changes", cell: (a: any) => Object.entries(a.changes).map(([k, v]: [string, any]) => `${k}: ${show(v.from)} → ${show(v.to)}`).join("; ") },
              ]}
            />
          </Section>
        </div>
      </div>
    </>
  );
}

export const tackModule: ConsoleModule = {
  id: "board",
  title: "Card board",
  scope: "workspace",
  service: "tack",
  screens: [{ id: "boards", title: "Boards", view: Boards }],
};
