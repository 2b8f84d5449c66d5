/** Views of graph rows, shared by follows and the other edges. */
import type { Static } from "@sinclair/typebox";
import type { Sql } from "../../../core/db";
import { actorsByIds, actorView } from "../actors";
import type { ExpandedEdge } from "./schemas";
import type { EdgeRow } from "./store";

/** An edge as the API shows it, with its actor when expanded: the ExpandedEdge schema is its one declaration. */
export type EdgeView = Static<typeof ExpandedEdge>;

export const edgeView = (r: EdgeRow): EdgeView => ({
  id: r.id,
  community_id: r.community_id,
  kind: r.kind,
  src_actor_id: r.src_actor_id,
  dst_actor_id: r.dst_actor_id,
  dst_post_id: r.dst_post_id,
  payload: JSON.parse(r.payload) as Record<string, unknown>,
  created_at: r.created_at,
});

/** Adds src_actor or dst_actor (one query for the page) to each edge view. */
export async function expandEdges(db: Sql, communityId: string, edges: EdgeView[], side: "src_actor" | "dst_actor"): Promise<EdgeView[]> {
  const key = side === "src_actor" ? "src_actor_id" : "dst_actor_id";
  const actors = new Map((await actorsByIds(db, communityId, [...new Set(edges.map((e) => e[key]))])).map((a) => [a.id, actorView(a)]));
  return edges.map((e) => ({ ...e, [side]: actors.get(e[key]) ?? null }));
}
