/**
 * Card board (tack): board workspaces with their labels (create, rename, recolor, delete),
 * projects with their lists, the board itself (cards in list columns; drag and drop calls
 * the move API, and every card has move buttons for keyboard use), card search (the API's
 * full-text `q`, with a label filter), card detail with edits, a due-date picker, labels
 * applied and removed, complete/reopen, archive, comments and activity.
 *
 * The card board's routes take only workspace API keys (svc_live_...), not console
 * sessions. The console mints one key limited to tack.* for the session (12 hours; it shows
 * under API keys), reuses it on every visit and reload of this tab, and revokes it on
 * sign-out (lib/session-keys.ts). An account that may not mint keys pastes one instead.
 */
import { useState } from "preact/hooks";
import { ApiError, apiHref, typedClient, type BodyOf, type Get, type FieldDetail } from "../lib/api";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { dropKey, heldKey, keepPastedKey, sessionKey, type KeyOwner, type KeySpec } from "../lib/session-keys";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, fromLocalInput, Loading, localInput, Section, Table, useLoad, when } from "../lib/ui";

const KEY: KeySpec = { service: "tack", label: "Admin console card board", actions: ["tack.*"], hours: 12 };
const owner = (p: ScreenProps): KeyOwner => ({ ws: p.ws, account: p.me.account?.id ?? "" });

async function call(key: string, method: string, filled: string, body?: unknown): Promise<Response> {
  return fetch(filled, {
    method,
    credentials: "omit",
    headers: { accept: "application/json", authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/**
 * A card-board call with the session's key: errors as ApiError; never the session's refresh
 * or sign-out. A minted key the board refuses (revoked under API keys, expired) is replaced
 * once; a pasted one is forgotten, so the screen asks again.
 */
async function board(p: ScreenProps, method: string, filled: string, body?: unknown): Promise<unknown> {
  let res = await call(await sessionKey(KEY, owner(p)), method, filled, body);
  if (res.status === 401) {
    const minted = heldKey(KEY, owner(p))?.minted;
    dropKey(KEY, p.ws.id);
    if (minted) res = await call(await sessionKey(KEY, owner(p)), method, filled, body);
  }
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) {
    if (res.status === 401) dropKey(KEY, p.ws.id);
    const e = (json?.error ?? {}) as { code?: string; message?: string; details?: FieldDetail[] };
    throw new ApiError(res.status, e.code ?? `HTTP_${res.status}`, e.message ?? res.statusText, e.details ?? []);
  }
  return json;
}

/** The card board's API, typed, with the session's key. */
const tack = (p: ScreenProps) => typedClient((method, filled, body) => board(p, method, filled, body));

type Card = Get<"/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}">;
type List = Get<"/tack/api/v1/workspaces/{workspace_id}/projects/{project}">["lists"][number];
type Label = Get<"/tack/api/v1/workspaces/{workspace_id}/labels">["data"][number];

/** Shown when no key could be minted (an account without apikey.create): paste one. */
function KeyGate({ p, error, onKey }: { p: ScreenProps; error: Error; onKey: () => void }) {
  return (
    <Section title="Card-board API key">
      <p class="muted">The card board's API takes a workspace API key, not a console session, and the console could not create one for you:</p>
      <ErrorNote error={error} />
      <div class="row-actions">
        <ActionButton label="Try again" run={async () => onKey()} />
      </div>
      <Form
        id="board-key"
        submitLabel="Use this key"
        fields={[{ name: "key", label: "Paste an API key allowed tack.*", type: "password", required: true, placeholder: "svc_live_..." }]}
        onSubmit={async (v) => {
          const key = String(v.key ?? "");
          const res = await call(key, "GET", apiHref("/tack/api/v1/workspaces", { query: { limit: 1 } }));
          if (!res.ok) throw new ApiError(res.status, res.status === 401 ? "UNAUTHORIZED" : `HTTP_${res.status}`, res.status === 401 ? "That key is not valid" : "That key may not read the card board");
          keepPastedKey(KEY, owner(p), key);
          onKey();
        }}
      />
    </Section>
  );
}

function Boards(p: ScreenProps) {
  const [attempt, setAttempt] = useState(0);
  const ready = useLoad(() => sessionKey(KEY, owner(p)), [p.ws.id, attempt]);
  if (ready.error) return <KeyGate p={p} error={ready.error} onKey={() => setAttempt((n) => n + 1)} />;
  if (ready.data === undefined) return <Loading />;
  const [wsRef, project, card] = p.rest;
  if (wsRef && project && card) return <CardDetail p={p} ws={wsRef} project={project} id={card} />;
  if (wsRef && project) return <BoardView p={p} ws={wsRef} project={project} />;
  if (wsRef) return <Projects p={p} ws={wsRef} />;
  return <Workspaces p={p} />;
}

function Workspaces({ p }: { p: ScreenProps }) {
  const list = useLoad(() => tack(p).get("/tack/api/v1/workspaces", { query: { limit: 100 } }), [p.ws.id]);
  return (
    <>
      <Section title="Board workspaces">
        <p class="muted" data-testid="board-key-note">
          The card board's API takes API keys: this console session uses one key limited to tack.* (listed under API keys, 12 hours), revoked when you sign out.
        </p>
        <ErrorNote error={list.error} />
        <Table
          label="Board workspaces"
          rows={list.data?.data ?? []}
          empty={list.loading ? "Loading…" : "No board workspace yet."}
          onRow={(w) => go(p.href("boards", w.name))}
          columns={[
            { label: "Name", cell: (w) => <a href={p.href("boards", w.name)}>{w.display_name}</a> },
            { label: "Slug", cell: (w) => <code>{w.name}</code> },
            { label: "Created", cell: (w) => when(w.created_at) },
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
            const w = await tack(p).post("/tack/api/v1/workspaces", { body: v as BodyOf<"post", "/tack/api/v1/workspaces"> });
            go(p.href("boards", w.name));
          }}
        />
      </Section>
    </>
  );
}

type ProjectAt = { workspace_id: string; project: string };

function Projects({ p, ws }: { p: ScreenProps; ws: string }) {
  const list = useLoad(() => tack(p).get("/tack/api/v1/workspaces/{workspace_id}/projects", { path: { workspace_id: ws }, query: { limit: 100 } }), [ws]);
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
          onRow={(pr) => go(p.href("boards", ws, pr.name))}
          columns={[
            { label: "Project", cell: (pr) => <a href={p.href("boards", ws, pr.name)}>{pr.display_name}</a> },
            { label: "Lists", cell: (pr) => pr.lists.map((l) => l.display_name).join(" → ") },
            { label: "Status", cell: (pr) => <Badge text={pr.status} tone={pr.status === "active" ? "ok" : "warn"} /> },
          ]}
        />
      </Section>
      <Labels p={p} ws={ws} />
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
            const pr = await tack(p).post("/tack/api/v1/workspaces/{workspace_id}/projects", { path: { workspace_id: ws }, body: { name: v.name, display_name: v.display_name, lists } as BodyOf<"post", "/tack/api/v1/workspaces/{workspace_id}/projects"> });
            go(p.href("boards", ws, pr.name));
          }}
        />
      </Section>
    </>
  );
}

const COLOR_RE = /^#[0-9a-fA-F]{6}$/;

/** The board workspace's labels: create, rename and recolor in place, delete (cards lose it). */
function Labels({ p, ws }: { p: ScreenProps; ws: string }) {
  const at = { workspace_id: ws };
  const list = useLoad(() => tack(p).get("/tack/api/v1/workspaces/{workspace_id}/labels", { path: at, query: { limit: 100 } }), [ws]);
  const [editing, setEditing] = useState<string | null>(null);
  const rows = list.data?.data ?? [];
  return (
    <Section title="Labels">
      <ErrorNote error={list.error} />
      <Table
        label="Labels"
        rows={rows}
        empty={list.loading ? "Loading…" : "No label yet."}
        columns={[
          {
            label: "Label",
            cell: (l) =>
              editing === l.id ? (
                <Form
                  id={`label-edit-${l.id}`}
                  inline
                  submitLabel="Save label"
                  fields={[
                    { name: "name", label: `New name of ${l.name}`, initial: l.name, required: true },
                    { name: "color", label: `Colour of ${l.name}`, type: "color", initial: COLOR_RE.test(l.color) ? l.color.toLowerCase() : "#9ca3af" },
                  ]}
                  onSubmit={async (v) => {
                    await tack(p).patch("/tack/api/v1/workspaces/{workspace_id}/labels/{label}", { path: { ...at, label: l.id }, body: { name: v.name, color: v.color } as BodyOf<"patch", "/tack/api/v1/workspaces/{workspace_id}/labels/{label}"> });
                    setEditing(null);
                    list.reload();
                  }}
                >
                  <button type="button" class="secondary small" onClick={() => setEditing(null)}>
                    Cancel
                  </button>
                </Form>
              ) : (
                <LabelChip name={l.name} color={l.color} />
              ),
          },
          { label: "Colour", cell: (l) => <code>{l.color}</code> },
          {
            label: "",
            cell: (l) => (
              <span class="row-actions">
                <button type="button" class="secondary small" aria-label={`Edit label ${l.name}`} onClick={() => setEditing(l.id)}>
                  Edit
                </button>
                <ConfirmButton label="Delete" name={`Delete label ${l.name}`} confirm="Confirm: cards lose it" onConfirm={async () => (await tack(p).delete("/tack/api/v1/workspaces/{workspace_id}/labels/{label}", { path: { ...at, label: l.id } }), list.reload())} />
              </span>
            ),
          },
        ]}
      />
      <h3>New label</h3>
      <Form
        id="create-label"
        inline
        resetOnSuccess
        submitLabel="Create label"
        fields={[
          { name: "name", label: "Label name", required: true },
          { name: "color", label: "Label colour", type: "color", initial: "#9ca3af" },
        ]}
        onSubmit={async (v) => (await tack(p).post("/tack/api/v1/workspaces/{workspace_id}/labels", { path: at, body: { name: v.name, color: v.color } as BodyOf<"post", "/tack/api/v1/workspaces/{workspace_id}/labels"> }), list.reload())}
      />
    </Section>
  );
}

/** A label's name on its colour (the colour is set through the DOM, which the page's CSP allows). */
function LabelChip({ name, color }: { name: string; color?: string }) {
  return (
    <span class="label-chip">
      <span class="label-dot" style={color && COLOR_RE.test(color) ? { background: color } : undefined} aria-hidden="true" />
      {name}
    </span>
  );
}

/** Every active card of a project in board order (pages of 100). */
async function allCards(p: ScreenProps, at: ProjectAt) {
  const out: Get<"/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards">["data"] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await tack(p).get("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards", { path: at, query: { limit: 100, offset } });
    out.push(...page.data);
    if (!page.pagination.has_more || offset > 2000) return out;
  }
}

function BoardView({ p, ws, project }: { p: ScreenProps; ws: string; project: string }) {
  const at = { workspace_id: ws, project };
  const data = useLoad(async () => ({ project: await tack(p).get("/tack/api/v1/workspaces/{workspace_id}/projects/{project}", { path: at }), cards: await allCards(p, at) }), [ws, project]);
  const [dragging, setDragging] = useState<string | null>(null);
  const [moveError, setMoveError] = useState<Error | null>(null);
  const [status, setStatus] = useState("");
  if (data.error) return <ErrorNote error={data.error} />;
  if (!data.data) return <Loading />;
  const { project: pr, cards } = data.data;
  const lists = pr.lists;
  const inList = (id: string) => cards.filter((c) => c.list_id === id).sort((a, b) => a.position - b.position);
  const move = async (card: { id: string; title: string }, listId: string, position: number) => {
    setMoveError(null);
    try {
      const moved = await tack(p).post("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}/move", { path: { ...at, card_id: card.id }, body: { list: listId, position } });
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
      <CardSearch p={p} ws={ws} project={project} lists={lists} />
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
                onSubmit={async (v) => (await tack(p).post("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards", { path: at, body: { title: (v.title as string | undefined) ?? "", list: l.id } }), data.reload())}
              />
            </section>
          );
        })}
      </div>
    </>
  );
}

/** Full-text search over the project's cards (the API's q: titles and bodies), optionally of one label. */
function CardSearch({ p, ws, project, lists }: { p: ScreenProps; ws: string; project: string; lists: List[] }) {
  const labels = useLoad(() => tack(p).get("/tack/api/v1/workspaces/{workspace_id}/labels", { path: { workspace_id: ws }, query: { limit: 100 } }), [ws]);
  const [query, setQuery] = useState<{ q?: string; label?: string } | null>(null);
  const results = useLoad(async () => {
    if (!query) return null;
    return tack(p).get("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards", { path: { workspace_id: ws, project }, query: { limit: 50, q: query.q, label: query.label } });
  }, [JSON.stringify(query), project]);
  const listName = Object.fromEntries(lists.map((l) => [l.id, l.display_name]));
  return (
    <Section title="Search cards">
      <Form
        id="card-search"
        inline
        submitLabel="Search"
        fields={[
          { name: "q", label: "Words in title or body" },
          { name: "label", label: "Label", type: "select", options: [{ value: "", label: "any label" }, ...(labels.data?.data ?? []).map((l) => ({ value: l.name, label: l.name }))] },
        ]}
        onSubmit={async (v) => setQuery(v.q || v.label ? { q: v.q as string | undefined, label: v.label as string | undefined } : null)}
      >
        {query && (
          <button type="button" class="secondary small" onClick={() => setQuery(null)}>
            Clear search
          </button>
        )}
      </Form>
      <ErrorNote error={results.error} />
      {query && results.data && (
        <>
          <p class="muted" role="status">
            {results.data.pagination.total} matching {results.data.pagination.total === 1 ? "card" : "cards"}
            {results.data.pagination.has_more ? " (the first 50 shown)" : ""}.
          </p>
          <Table
            label="Matching cards"
            rows={results.data.data}
            empty="No card matches."
            columns={[
              { label: "Card", cell: (c) => <a href={p.href("boards", ws, project, c.id)}>{c.title}</a> },
              { label: "List", cell: (c) => listName[c.list_id] ?? "?" },
              { label: "Labels", cell: (c) => c.labels.join(", ") || "—" },
              { label: "Due", cell: (c) => when(c.due_at) },
            ]}
          />
        </>
      )}
    </Section>
  );
}

function CardDetail({ p, ws, project, id }: { p: ScreenProps; ws: string; project: string; id: string }) {
  const at = { workspace_id: ws, project, card_id: id };
  const card = useLoad(() => tack(p).get("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}", { path: at }), [ws, project, id]);
  const comments = useLoad(() => tack(p).get("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}/comments", { path: at, query: { limit: 100 } }), [ws, project, id]);
  const activity = useLoad(() => tack(p).get("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}/activity", { path: at, query: { limit: 50 } }), [ws, project, id]);
  const proj = useLoad(() => tack(p).get("/tack/api/v1/workspaces/{workspace_id}/projects/{project}", { path: { workspace_id: ws, project } }), [ws, project]);
  // List ids in the activity read as list names.
  const listName = Object.fromEntries((proj.data?.lists ?? []).map((l) => [l.id, l.display_name]));
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
            key={JSON.stringify([c.updated_at, c.title, c.body, c.priority, c.due_at])}
            id="card-edit"
            submitLabel="Save card"
            fields={[
              { name: "title", label: "Title", initial: c.title },
              { name: "body", label: "Body (markdown)", type: "textarea", rows: 5, initial: c.body },
              { name: "priority", label: "Priority", type: "select", initial: c.priority, options: ["none", "low", "medium", "high", "urgent"].map((x) => ({ value: x, label: x })) },
              { name: "due_at", label: "Due", type: "datetime-local", initial: localInput(c.due_at), hint: "Your browser's time zone; empty for no due date." },
            ]}
            onSubmit={async (v) => {
              await tack(p).patch("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}", { path: at, body: { title: v.title, body: v.body ?? "", priority: v.priority, due_at: fromLocalInput(v.due_at) } as BodyOf<"patch", "/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}"> });
              changed();
            }}
          />
          <div class="row-actions">
            {c.due_at && <ActionButton label="Clear due date" run={async () => (await tack(p).patch("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}", { path: at, body: { due_at: null } }), changed())} />}
            {c.completed_at ? <ActionButton label="Reopen" run={async () => (await tack(p).post("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}/reopen", { path: at }), changed())} /> : <ActionButton label="Complete" kind="primary" run={async () => (await tack(p).post("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}/complete", { path: at }), changed())} />}
            {!c.archived_at && <ConfirmButton label="Archive card" onConfirm={async () => (await tack(p).delete("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}", { path: at }), go(p.href("boards", ws, project)))} />}
          </div>
        </Section>
        <div>
          <CardLabels key={JSON.stringify([c.updated_at, c.labels])} p={p} at={at} card={c} onChange={changed} />
          <Section title="Comments">
            <ErrorNote error={comments.error} />
            <ul class="comments" aria-label="Comments">
              {(comments.data?.data ?? []).map((m) => (
                <li>
                  <span class="muted">
                    {when(m.created_at)} · {m.author_id}
                  </span>
                  <p>{m.body}</p>
                </li>
              ))}
            </ul>
            <Form id="add-comment" resetOnSuccess submitLabel="Comment" fields={[{ name: "body", label: "Comment", type: "textarea", rows: 3, required: true }]} onSubmit={async (v) => (await tack(p).post("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}/comments", { path: at, body: { body: (v.body as string | undefined) ?? "" } }), comments.reload(), activity.reload())} />
          </Section>
          <Section title="Activity">
            <ErrorNote error={activity.error} />
            <Table
              label="Activity"
              rows={activity.data?.data ?? []}
              columns={[
                { label: "When", cell: (a) => when(a.timestamp) },
                { label: "Action", cell: (a) => a.action },
                { label: "Changes", cell: (a) => Object.entries(a.changes as Record<string, { from: unknown; to: unknown }>).map(([k, v]) => `${k}: ${show(v.from)} → ${show(v.to)}`).join("; ") },
              ]}
            />
          </Section>
        </div>
      </div>
    </>
  );
}

/** The workspace's labels as switches on one card: each change saves the card's label set. */
function CardLabels({ p, at, card, onChange }: { p: ScreenProps; at: { workspace_id: string; project: string; card_id: string }; card: Card; onChange: () => void }) {
  const ws = at.workspace_id;
  const labels = useLoad(() => tack(p).get("/tack/api/v1/workspaces/{workspace_id}/labels", { path: { workspace_id: ws }, query: { limit: 100 } }), [ws]);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  // Shown as clicked while saving; the parent keys this component by the card's labels.
  const [on, setOn] = useState(() => new Set<string>(card.labels));
  const toggle = async (name: string, checked: boolean) => {
    setError(null);
    setBusy(true);
    const before = on;
    const next = new Set(on);
    if (checked) next.add(name);
    else next.delete(name);
    setOn(next);
    try {
      await tack(p).patch("/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}", { path: at, body: { labels: [...next] } });
      onChange();
    } catch (e) {
      setOn(before);
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  const all: Label[] = labels.data?.data ?? [];
  return (
    <Section title="Labels">
      <ErrorNote error={labels.error ?? error} />
      {labels.data && !all.length && (
        <p class="muted">
          No label in this workspace yet: create some on <a href={p.href("boards", ws)}>its projects page</a>.
        </p>
      )}
      <ul class="label-toggles" aria-label="Card labels">
        {all.map((l) => (
          <li>
            <label>
              <input type="checkbox" checked={on.has(l.name)} disabled={busy} onChange={(e) => toggle(l.name, (e.target as HTMLInputElement).checked)} /> <LabelChip name={l.name} color={l.color} />
            </label>
          </li>
        ))}
      </ul>
    </Section>
  );
}

export const tackModule: ConsoleModule = {
  id: "board",
  title: "Card board",
  scope: "workspace",
  service: "tack",
  screens: [{ id: "boards", title: "Boards", view: Boards }],
};
