/**
 * Moderation: the review queue (targets with open flags, oldest first) and its actions, each
 * closing the target's flags; keyword filters (hold for review, or block); and `moderate`,
 * the same actions applied from a post or comment without a flag.
 */
import { useState } from "preact/hooks";
import { api, get } from "../../lib/api";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Json, PagedTable, Section, Table, useLoad, when } from "../../lib/ui";
import type { Actors } from "./shared";

export const moderationPath = (wsId: string, communityId: string) => `/social/v1/workspaces/${wsId}/communities/${communityId}/moderation`;

/** Applies a moderation action (hide, remove, restore, warn, ban, dismiss) to a post, comment or actor. */
export const moderate = (path: string, action: string, target_type: string, target_id: string) => api("POST", `${path}/actions`, { action, target_type, target_id });

/** Which actions fit a target: posts and comments are hidden / removed; actors are banned. */
const ACTIONS_FOR: Record<string, [string, string][]> = {
  post: [["hide", "Hide"], ["remove", "Remove"], ["restore", "Restore"], ["warn", "Warn author"], ["ban", "Ban author"], ["dismiss", "Dismiss"]],
  comment: [["hide", "Hide"], ["remove", "Remove"], ["restore", "Restore"], ["warn", "Warn author"], ["ban", "Ban author"], ["dismiss", "Dismiss"]],
  actor: [["warn", "Warn"], ["ban", "Ban"], ["restore", "Restore"], ["dismiss", "Dismiss"]],
};

export function Moderation({ path, actors, postHref }: { path: string; actors: Actors; postHref: (id: string) => string }) {
  const [tick, setTick] = useState(0);
  const [open, setOpen] = useState<any>(null);
  const act = async (item: any, action: string) => {
    await moderate(path, action, item.target_type, item.target_id);
    setOpen(null);
    setTick((n) => n + 1);
  };
  return (
    <>
      <Section title="Moderation queue" actions={<ActionButton label="Refresh" run={async () => setTick((n) => n + 1)} />}>
        <PagedTable
          label="Moderation queue"
          path={`${path}/queue`}
          reloadKey={tick}
          onRow={setOpen}
          empty="No open flags."
          columns={[
            {
              label: "Target",
              cell: (q: any) => (
                <span>
                  {q.target_type} {q.target_type === "post" ? <a href={postHref(q.target_id)}>{q.target_id}</a> : <code>{q.target_id}</code>}
                </span>
              ),
            },
            { label: "Author / actor", cell: (q: any) => (q.target_actor_id ? actors.name(q.target_actor_id) : "—") },
            { label: "Flags", cell: (q: any) => `${q.flag_count} (${q.reporter_count} reporters)` },
            { label: "Reasons", cell: (q: any) => Object.entries(q.reasons).map(([r, n]) => `${r} ×${n}`).join(", ") },
            { label: "Hidden", cell: (q: any) => (q.auto_hidden ? <Badge text="auto-hidden" tone="warn" /> : "") },
            { label: "Last flagged", cell: (q: any) => when(q.last_flagged_at) },
            {
              label: "",
              cell: (q: any) => (
                <span class="row-actions">
                  {(ACTIONS_FOR[q.target_type] ?? [["dismiss", "Dismiss"]]).map(([a, label]) =>
                    a === "ban" || a === "remove" ? <ConfirmButton label={label} onConfirm={() => act(q, a)} /> : <ActionButton label={label} run={() => act(q, a)} />,
                  )}
                </span>
              ),
            },
          ]}
        />
      </Section>
      {open && (
        <Section title={`Flags on ${open.target_type} ${open.target_id}`} actions={<button type="button" class="secondary small" onClick={() => setOpen(null)}>Close</button>}>
          <Json value={open.flags} />
        </Section>
      )}
      <Keywords path={`${path}/keywords`} />
    </>
  );
}

/** Keyword filters: a post or comment with the word is held (hidden and queued) or refused (block). */
function Keywords({ path }: { path: string }) {
  const list = useLoad(() => get<{ data: any[] }>(path), [path]);
  return (
    <Section title="Keyword filters">
      <ErrorNote error={list.error} />
      <Table
        label="Keyword filters"
        rows={list.data?.data ?? []}
        empty={list.loading ? "Loading…" : "No keyword filter."}
        columns={[
          { label: "Keyword", cell: (k: any) => <code>{k.keyword}</code> },
          { label: "Action", cell: (k: any) => (k.action === "block" ? "block (refused)" : "hold (hidden, queued)") },
          { label: "Added", cell: (k: any) => when(k.created_at) },
          { label: "", cell: (k: any) => <ConfirmButton label="Remove" onConfirm={async () => (await api("DELETE", `${path}/${k.id}`), list.reload())} /> },
        ]}
      />
      <Form
        id="add-keyword"
        inline
        resetOnSuccess
        submitLabel="Add filter"
        fields={[
          { name: "keyword", label: "Keyword", required: true, hint: "Matched as a whole word, any case." },
          { name: "action", label: "When found", type: "select", options: [{ value: "hold", label: "hold for review" }, { value: "block", label: "block" }] },
        ]}
        onSubmit={async (v) => (await api("POST", path, v), list.reload())}
      />
    </Section>
  );
}
