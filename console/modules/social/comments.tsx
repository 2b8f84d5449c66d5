/**
 * Comments of a post: top-level comments (pinned first, then newest) with their replies
 * (oldest first) under the one opened; written as an actor, as a reply when one is chosen;
 * hidden, removed or restored through moderation, or deleted.
 */
import { useState } from "preact/hooks";
import { api, type BodyOf } from "../../lib/api";
import { ActionButton, Badge, ConfirmButton, Form, PagedTable, Section, when, type Column, type RowOf } from "../../lib/ui";
import { moderate, type ModerationAt } from "./moderation";
import { actorOptions, lane, tone, WithActors, type Actors } from "./shared";

const COMMENTS = "/social/v1/communities/{community_id}/posts/{post_id}/comments";
type Comment = RowOf<typeof COMMENTS>;

interface Props {
  communityId: string;
  postId: string;
  moderation: ModerationAt;
  actors: Actors;
  /** The post's counts changed. */
  onChange: () => void;
}

export function Comments({ communityId, postId, moderation, actors, onChange }: Props) {
  const path = { ...lane(communityId), post_id: postId };
  const [tick, setTick] = useState(0);
  const [thread, setThread] = useState<Comment | null>(null);
  const changed = () => (setTick((t) => t + 1), onChange());
  const columns: Column<Comment>[] = [
    { label: "Author", cell: (c) => actors.name(c.actor_id) },
    { label: "Comment", cell: (c) => c.body },
    { label: "Status", cell: (c) => <Badge text={c.pinned ? `${c.status}, pinned` : c.status} tone={tone(c.status)} /> },
    { label: "Written", cell: (c) => when(c.created_at) },
    {
      label: "",
      cell: (c) => (
        <span class="row-actions">
          {c.depth === 0 && <ActionButton label="Replies" run={async () => setThread(c)} />}
          <ActionButton label="Hide" run={() => moderate(moderation, "hide", "comment", c.id).then(changed)} />
          <ConfirmButton label="Delete" onConfirm={() => api.delete("/social/v1/communities/{community_id}/posts/{post_id}/comments/{comment_id}", { path: { ...path, comment_id: c.id } }).then(changed)} />
        </span>
      ),
    },
  ];
  return (
    <Section title="Comments">
      <PagedTable label="Comments" path={COMMENTS} params={path} reloadKey={tick} empty="No comment yet." columns={columns} />
      {thread && (
        <section aria-label="Replies">
          <h3>
            Replies to {actors.name(thread.actor_id)}{" "}
            <button type="button" class="secondary small" onClick={() => setThread(null)}>
              Close
            </button>
          </h3>
          <PagedTable label="Replies" path={COMMENTS} params={path} query={{ parent_id: thread.id }} reloadKey={tick} empty="No reply yet." columns={columns} />
        </section>
      )}
      <h3>{thread ? "Reply" : "Add a comment"}</h3>
      <WithActors actors={actors}>
        {() => (
          <Form
            key={thread?.id ?? "top"}
            id="add-comment"
            resetOnSuccess
            submitLabel={thread ? "Reply" : "Comment"}
            fields={[
              { name: "actor_id", label: "Commenter", type: "select", options: actorOptions(actors) },
              { name: "body", label: "Comment", type: "textarea", rows: 3, required: true },
            ]}
            onSubmit={async (v) => (await api.post(COMMENTS, { path, body: { ...(v as BodyOf<"post", typeof COMMENTS>), parent_id: thread?.id ?? null } }), changed())}
          />
        )}
      </WithActors>
    </Section>
  );
}
