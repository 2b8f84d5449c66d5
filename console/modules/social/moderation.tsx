/**
 * Moderation: the review queue (targets with open flags, oldest first) and its actions, each
 * closing the target's flags; keyword filters (hold for review, or block); and `moderate`,
 * the same actions applied from a post or comment without a flag.
 */
import { useState } from "preact/hooks";
import { api, type BodyOf } from "../../lib/api";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Json, PagedTable, Section, Table, useLoad, when, type RowOf } from "../../lib/ui";
import type { Actors } from "./shared";

/** The path parameters of a community's moderation routes (workspace-scoped). */
export const moderationPath = (wsId: string, communityId: string) => ({ workspace_id: wsId, community_id: communityId });
export type ModerationAt = ReturnType<typeof moderationPath>;
type Action = BodyOf<"post", "/social/v1/workspaces/{workspace_id}/communities/{community_id}/moderation/actions">;

/** Applies a moderation action (hide, remove, restore, warn, ban, dismiss) to a post, comment or actor. */
export const moderate = (at: ModerationAt, action: Action["action"], target_type: Action["target_type"], target_id: string) => api.post("/social/v1/workspaces/{workspace_id}/communities/{community_id}/moderation/actions", { path: at, body: { action, target_type, target_id } });

/** Which actions fit a target: posts and comments are hidden / removed; actors are banned. */
const ACTIONS_FOR: Record<string, [Action["action"], string][]> = {
  post: [["hide", "Hide"], ["remove", "Remove"], ["restore", "Restore"], ["warn", "Warn author"], ["ban", "Ban author"], ["dismiss", "Dismiss"]],
  comment: [["hide", "Hide"], ["remove", "Remove"], ["restore", "Restore"], ["warn", "Warn author"], ["ban", "Ban author"], ["dismiss", "Dismiss"]],
  actor: [["warn", "Warn"], ["ban", "Ban"], ["restore", "Restore"], ["dismiss", "Dismiss"]],
};

type QueueItem = RowOf<"/social/v1/workspaces/{workspace_id}/communities/{community_id}/moderation/queue">;

export function Moderation({ path, actors, postHref }: { path: ModerationAt; actors: Actors; postHref: (id: string) => string }) {
  const [tick, setTick] = useState(0);
  const [open, setOpen] = useState<QueueItem | null>(null);
  const act = async (item: QueueItem, action: Action["action"]) => {
    await moderate(path, action, item.target_type, item.target_id);
    setOpen(null);
    setTick((n) => n + 1);
  };
  return (
    <>
      <Section title="Moderation queue" actions={<ActionButton label="Refresh" run={async () => setTick((n) => n + 1)} />}>
        <PagedTable
          label="Moderation queue"
          path="/social/v1/workspaces/{workspace_id}/communities/{community_id}/moderation/queue" params={path}
          reloadKey={tick}
          onRow={setOpen}
          empty="No open flags."
          columns={[
            {
              label: "Target",
              cell: (q) => (
                <span>
                  {q.target_type} {q.target_type === "post" ? <a href={postHref(q.target_id)}>{q.target_id}</a> : <code>{q.target_id}</code>}
                </span>
              ),
            },
            { label: "Author / actor", cell: (q) => (q.target_actor_id ? actors.name(q.target_actor_id) : "—") },
            { label: "Flags", cell: (q) => `${q.flag_count} (${q.reporter_count} reporters)` },
            { label: "Reasons", cell: (q) => Object.entries(q.reasons as Record<string, number>).map(([r, n]) => `${r} ×${n}`).join(", ") },
            { label: "Hidden", cell: (q) => (q.auto_hidden ? <Badge text="auto-hidden" tone="warn" /> : "") },
            { label: "Last flagged", cell: (q) => when(q.last_flagged_at) },
            {
              label: "",
              cell: (q) => (
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
      <Keywords at={path} />
    </>
  );
}

/** Keyword filters: a post or comment with the word is held (hidden and queued) or refused (block). */
function Keywords({ at }: { at: ModerationAt }) {
  const list = useLoad(() => api.get("/social/v1/workspaces/{workspace_id}/communities/{community_id}/moderation/keywords", { path: at }), [at.workspace_id, at.community_id]);
  return (
    <Section title="Keyword filters">
      <ErrorNote error={list.error} />
      <Table
        label="Keyword filters"
        rows={list.data?.data ?? []}
        empty={list.loading ? "Loading…" : "No keyword filter."}
        columns={[
          { label: "Keyword", cell: (k) => <code>{k.keyword}</code> },
          { label: "Action", cell: (k) => (k.action === "block" ? "block (refused)" : "hold (hidden, queued)") },
          { label: "Added", cell: (k) => when(k.created_at) },
          { label: "", cell: (k) => <ConfirmButton label="Remove" onConfirm={async () => (await api.delete("/social/v1/workspaces/{workspace_id}/communities/{community_id}/moderation/keywords/{keyword_id}", { path: { ...at, keyword_id: k.id } }), list.reload())} /> },
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
        onSubmit={async (v) => (await api.post("/social/v1/workspaces/{workspace_id}/communities/{community_id}/moderation/keywords", { path: at, body: v as BodyOf<"post", "/social/v1/workspaces/{workspace_id}/communities/{community_id}/moderation/keywords"> }), list.reload())}
      />
    </Section>
  );
}
