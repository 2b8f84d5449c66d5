/**
 * An actor's in-app notifications, grouped by type and target (latest activity first), with
 * the unread and unseen counts a product's bell shows; groups marked read one by one or all,
 * all marked seen. The actor is part of the address.
 */
import { useState } from "preact/hooks";
import { api, get } from "../../lib/api";
import { ActionButton, Badge, ErrorNote, PagedTable, useLoad, when } from "../../lib/ui";
import { ActorPicker, lane, WithActors, type Actors } from "./shared";

export function Notifications({ communityId, actors, actorId, href }: { communityId: string; actors: Actors; actorId?: string; href: (...rest: string[]) => string }) {
  return (
    <section class="card" aria-label="Notifications">
      <WithActors actors={actors}>
        {() => (
          <>
            <ActorPicker actors={actors} value={actorId} label="Notifications of" hrefFor={(id) => href("notifications", ...(id ? [id] : []))} />
            {actorId && <Inbox path={`${lane(communityId)}/actors/${actorId}/notifications`} actors={actors} postHref={(id) => href("posts", id)} />}
          </>
        )}
      </WithActors>
    </section>
  );
}

function Inbox({ path, actors, postHref }: { path: string; actors: Actors; postHref: (id: string) => string }) {
  const [tick, setTick] = useState(0);
  const counts = useLoad(() => get<{ unread_count: number; unseen_count: number }>(`${path}/counts`), [path, tick]);
  const mark = (what: "read" | "seen", ids?: string[]) => api("POST", `${path}/${what}`, ids ? { ids } : {}).then(() => setTick((t) => t + 1));
  const from = (n: any) => `${n.latest_actor_ids.map(actors.name).join(", ")}${n.actor_count > n.latest_actor_ids.length ? ` and ${n.actor_count - n.latest_actor_ids.length} more` : ""}`;
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
        path={path}
        reloadKey={tick}
        empty="No notification yet."
        columns={[
          { label: "Type", cell: (n: any) => <Badge text={n.type.replace(/_/g, " ")} tone={n.is_read ? undefined : "info"} /> },
          { label: "From", cell: (n: any) => from(n) },
          { label: "On", cell: (n: any) => (n.target_type === "post" ? <a href={postHref(n.target_id)}>post</a> : n.target_type) },
          { label: "Activities", cell: (n: any) => String(n.activity_count) },
          { label: "Latest", cell: (n: any) => when(n.updated_at) },
          { label: "", cell: (n: any) => (n.is_read ? <span class="muted">read</span> : <ActionButton label="Mark read" run={() => mark("read", [n.id])} />) },
        ]}
      />
    </>
  );
}
