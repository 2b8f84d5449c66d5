/**
 * An actor's in-app notifications, grouped by type and target (latest activity first), with
 * the unread and unseen counts a product's bell shows; groups marked read one by one or all,
 * all marked seen. The actor is part of the address.
 */
import { useState } from "preact/hooks";
import { api } from "../../lib/api";
import { ActionButton, Badge, ErrorNote, PagedTable, useLoad, when, type RowOf } from "../../lib/ui";
import { ActorPicker, lane, WithActors, type Actors } from "./shared";

export function Notifications({ communityId, actors, actorId, href }: { communityId: string; actors: Actors; actorId?: string; href: (...rest: string[]) => string }) {
  return (
    <section class="card" aria-label="Notifications">
      <WithActors actors={actors}>
        {() => (
          <>
            <ActorPicker actors={actors} value={actorId} label="Notifications of" hrefFor={(id) => href("notifications", ...(id ? [id] : []))} />
            {actorId && <Inbox at={{ ...lane(communityId), actor_id: actorId }} actors={actors} postHref={(id) => href("posts", id)} />}
          </>
        )}
      </WithActors>
    </section>
  );
}

const NOTIFICATIONS = "/social/v1/communities/{community_id}/actors/{actor_id}/notifications";

function Inbox({ at, actors, postHref }: { at: { community_id: string; actor_id: string }; actors: Actors; postHref: (id: string) => string }) {
  const [tick, setTick] = useState(0);
  const counts = useLoad(() => api.get(`${NOTIFICATIONS}/counts`, { path: at }), [at.community_id, at.actor_id, tick]);
  const mark = (what: "read" | "seen", ids?: string[]) => api.post(`${NOTIFICATIONS}/${what}`, { path: at, body: ids ? { ids } : {} }).then(() => setTick((t) => t + 1));
  const from = (n: RowOf<typeof NOTIFICATIONS>) => `${n.latest_actor_ids.map(actors.name).join(", ")}${n.actor_count > n.latest_actor_ids.length ? ` and ${n.actor_count - n.latest_actor_ids.length} more` : ""}`;
  return (
    <>
      <ErrorNote error={counts.error} />
      <p data-testid="notification-counts">
        <strong>{counts.data?.unread_count ?? "…"}</strong> unread, <strong>{counts.data?.unseen_count ?? "…"}</strong> unseen{" "}
        <span class="row-actions">
          <ActionButton label="Mark all read" run={() => mark("read")} />
          <ActionButton label="Mark all seen" run={() => mark("seen")} />
        </span>
      </p>
      <PagedTable
        label="Notifications"
        path={NOTIFICATIONS}
        params={at}
        reloadKey={tick}
        empty="No notification yet."
        columns={[
          { label: "Type", cell: (n) => <Badge text={n.type.replace(/_/g, " ")} tone={n.is_read ? undefined : "info"} /> },
          { label: "From", cell: (n) => from(n) },
          { label: "On", cell: (n) => (n.target_type === "post" ? <a href={postHref(n.target_id)}>post</a> : n.target_type) },
          { label: "Activities", cell: (n) => String(n.activity_count) },
          { label: "Latest", cell: (n) => when(n.updated_at) },
          { label: "", cell: (n) => (n.is_read ? <span class="muted">read</span> : <ActionButton label="Mark read" run={() => mark("read", [n.id])} />) },
        ]}
      />
    </>
  );
}
