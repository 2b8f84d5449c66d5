/** Routes of hides: POST /hides, DELETE /hides/{src_actor_id}/{post_id}, GET /actors/{actor_id}/hides. */
import { t } from "../../../core/schema";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { ActorParams, CommunityParams, Edge, errors, laneParams, Pagination, PageQuery, Payload, Uuid, UuidOut, writeErrors } from "../core/schemas";
import type { HideService } from "./service";

const tags = ["Community: hides"];
const HideEdge = t.Object({ ...Edge.properties, kind: t.String({ description: "hide" }), dst_post_id: UuidOut("The hidden post"), dst_actor_id: UuidOut("The post's author") });

export function hideRoutes(hides: HideService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .post("/hides", (c) => write(deps, c, 201, (p) => hides.hide(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: t.Object({
        src_actor_id: t.Optional(Uuid("The hiding actor (or actor_id)")),
        actor_id: t.Optional(Uuid()),
        post_id: t.Optional(Uuid("The post to hide (or dst_post_id)")),
        dst_post_id: t.Optional(Uuid()),
        payload: t.Optional(Payload),
      }),
      response: { 201: t.Object({ edge: HideEdge, created: t.Boolean() }), ...writeErrors },
      detail: { tags, summary: "Hide a post from the actor's home and discover feeds (action social.create)", description: "Idempotent; 404 when the actor cannot see the post." + IDEMPOTENT },
    })
    .delete("/hides/:src_actor_id/:post_id", async (c) => {
      await hides.unhide(requirePrincipal(c.principal), c.params.community_id, c.params.src_actor_id, c.params.post_id);
      c.set.status = 204;
    }, {
      params: laneParams("src_actor_id", "post_id"),
      response: errors,
      detail: { tags, summary: "Unhide (action social.delete); 204 always", responses: noContent() },
    })
    .get("/actors/:actor_id/hides", (c) => hides.list(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query), {
      params: ActorParams,
      query: PageQuery,
      response: { 200: t.Object({ data: t.Array(HideEdge), pagination: Pagination }), ...errors },
      detail: { tags, summary: "Posts the actor hid, newest first (action social.list)" },
    });
}
