/**
 * Actors of a community: the paged list, lookup by id or external id, and one actor's card
 * with its counters, metadata and status (suspend, reactivate).
 */
import { useState } from "preact/hooks";
import { api, type Get } from "../../lib/api";
import { ActionButton, Badge, ErrorNote, Form, Json, Loading, PagedTable, Section, useLoad, when } from "../../lib/ui";
import { lane, tone } from "./shared";

type Actor = Get<"/social/v1/communities/{community_id}/actors/{actor_id}">;

export function Actors({ communityId }: { communityId: string }) {
  const [open, setOpen] = useState<Actor | null>(null);
  const [tick, setTick] = useState(0);
  return (
    <>
      <Section title="Look up an actor">
        <Form
          id="actor-lookup"
          inline
          submitLabel="Look up"
          fields={[
            { name: "by", label: "By", type: "select", options: [{ value: "external", label: "external id" }, { value: "id", label: "actor id" }] },
            { name: "ref", label: "Id", required: true },
          ]}
          onSubmit={async (v) => {
            const ref = String(v.ref ?? "").trim();
            setOpen(
              v.by === "id"
                ? await api.get("/social/v1/communities/{community_id}/actors/{actor_id}", { path: { ...lane(communityId), actor_id: ref } })
                : await api.get("/social/v1/communities/{community_id}/actors/by-external/{external_id}", { path: { ...lane(communityId), external_id: ref } }),
            );
            setTick((t) => t + 1);
          }}
        />
      </Section>
      {open && <ActorCard communityId={communityId} actor={open} onChange={(a) => (setOpen(a), setTick(tick + 1))} onClose={() => setOpen(null)} />}
      <Section title="Actors" actions={<ActionButton label="Refresh" run={async () => setTick((t) => t + 1)} />}>
        <PagedTable
          label="Actors"
          path="/social/v1/communities/{community_id}/actors" params={lane(communityId)}
          reloadKey={tick}
          empty="No actor yet: your backend creates them (POST /actors)."
          onRow={setOpen}
          columns={[
            { label: "External id", cell: (a) => <code>{a.external_id}</code> },
            { label: "Name", cell: (a) => a.display_name ?? "—" },
            { label: "Status", cell: (a) => <Badge text={a.status} tone={tone(a.status === "deleted" ? "archived" : a.status)} /> },
            { label: "Private", cell: (a) => (a.is_private ? "yes" : "no") },
            { label: "Created", cell: (a) => when(a.created_at) },
          ]}
        />
      </Section>
    </>
  );
}

function ActorCard({ communityId, actor, onChange, onClose }: { communityId: string; actor: Actor; onChange: (a: Actor) => void; onClose: () => void }) {
  const path = { ...lane(communityId), actor_id: actor.id };
  const counters = useLoad(() => api.get("/social/v1/communities/{community_id}/actors/{actor_id}/counters", { path }), [communityId, actor.id, actor.updated_at]);
  const setStatus = async (status: "active" | "suspended") => onChange(await api.patch("/social/v1/communities/{community_id}/actors/{actor_id}", { path, body: { status } }));
  const n = counters.data;
  return (
    <Section
      title={`Actor ${actor.display_name ?? actor.external_id}`}
      actions={
        <button type="button" class="secondary small" onClick={onClose}>
          Close
        </button>
      }
    >
      <dl class="facts" data-testid="actor">
        <dt>Id</dt>
        <dd>
          <code>{actor.id}</code>
        </dd>
        <dt>External id</dt>
        <dd>
          <code>{actor.external_id}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <Badge text={actor.status} tone={tone(actor.status === "deleted" ? "archived" : actor.status)} />
          {actor.shadow_banned_at && <span class="muted"> shadow-banned until {when(actor.shadow_banned_until)}</span>}
        </dd>
        <dt>Private</dt>
        <dd>{actor.is_private ? "yes" : "no"}</dd>
      </dl>
      <h3>Counters</h3>
      <ErrorNote error={counters.error} />
      {n ? (
        <dl class="facts" data-testid="counters">
          <dt>Followers</dt>
          <dd>{n.follower_count}</dd>
          <dt>Following</dt>
          <dd>{n.following_count}</dd>
          <dt>Posts</dt>
          <dd>{n.post_count}</dd>
          <dt>Comments</dt>
          <dd>{n.comment_count}</dd>
          <dt>Blocks</dt>
          <dd>{n.blocks_count}</dd>
        </dl>
      ) : (
        !counters.error && <Loading />
      )}
      {Object.keys(actor.metadata ?? {}).length > 0 && (
        <>
          <h3>Metadata</h3>
          <Json value={actor.metadata} />
        </>
      )}
      <div class="row-actions">
        {actor.status === "active" && <ActionButton label="Suspend actor" run={() => setStatus("suspended")} />}
        {actor.status === "suspended" && <ActionButton label="Reactivate actor" run={() => setStatus("active")} />}
      </div>
    </Section>
  );
}
