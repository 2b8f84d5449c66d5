/** What the community screens share: the lanes' paths, status tones, actors by id, the actor picker. */
import type { JSX } from "preact";
import { api } from "../../lib/api";
import { go } from "../../lib/router";
import { ErrorNote, Loading, useLoad, type RowOf } from "../../lib/ui";

/** The path parameter of one community's customer-backend lane (the console's session is a credential there too). */
export const lane = (id: string) => ({ community_id: id });
export const tone = (s: string) => (s === "active" || s === "published" || s === "ready" ? "ok" : s === "suspended" || s === "processing" || s === "uploading" || s === "draft" || s === "scheduled" ? "warn" : "bad");

/** How many actors the pickers offer: a console is for looking around, the API pages the rest. */
export const PICKER_ACTORS = 200;

export type Actor = RowOf<"/social/v1/communities/{community_id}/actors">;

export const actorName = (a: Actor | undefined, id: string) => (a ? (a.display_name ?? a.external_id) : `${id.slice(0, 8)}…`);

/** The community's first 200 actors (newest first), for pickers and naming authors; read again when `again` changes. */
export function useActors(communityId: string, again?: unknown) {
  const r = useLoad(() => api.get("/social/v1/communities/{community_id}/actors", { path: lane(communityId), query: { limit: PICKER_ACTORS } }), [communityId, again]);
  const list = r.data?.data ?? [];
  const byId = new Map(list.map((a) => [a.id, a]));
  return { list, byId, name: (id: string) => actorName(byId.get(id), id), error: r.error, loading: r.loading, reload: r.reload };
}

export type Actors = ReturnType<typeof useActors>;

export const actorOptions = (actors: Actors) => actors.list.map((a) => ({ value: a.id, label: `${a.display_name ?? a.external_id} (${a.external_id})` }));

/** Renders `children` once the actors are loaded; with none yet, says where they come from. */
export function WithActors({ actors, children }: { actors: Actors; children: () => JSX.Element }) {
  if (actors.error) return <ErrorNote error={actors.error} />;
  if (actors.loading && actors.list.length === 0) return <Loading what="Loading actors" />;
  if (actors.list.length === 0) return <p class="muted">No actor yet: your backend creates them (POST /actors), or look one up under Actors.</p>;
  return children();
}

/** "Act as" picker for per-actor screens (feeds, notifications): the choice is part of the address. */
export function ActorPicker({ actors, value, label, hrefFor }: { actors: Actors; value: string | undefined; label: string; hrefFor: (actorId: string) => string }) {
  return (
    <div class="field picker">
      <label for="act-as">{label}</label>
      <select id="act-as" value={value ?? ""} onChange={(e) => go(hrefFor((e.target as HTMLSelectElement).value))}>
        <option value="">Choose an actor…</option>
        {actorOptions(actors).map((o) => (
          <option value={o.value}>{o.label}</option>
        ))}
      </select>
    </div>
  );
}

/**
 * A signed URL of this instance, as a path on the console's own origin: PUBLIC_URL may name
 * another origin (a proxy, or none reachable from here), and the console's policy allows
 * images and connections to its own origin only. The signature covers the path, not the host.
 */
export const onThisOrigin = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

export const REASONS = ["spam", "harassment", "hate", "violence", "sexual", "self_harm", "misinformation", "illegal", "other"];
