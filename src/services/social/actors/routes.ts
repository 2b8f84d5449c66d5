/** Routes of actors and counters: /social/v1/communities/{community_id}/actors..., /counters. */
import { t } from "../../../core/schema";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { ActorParams, CommunityParams, errors, ErrorBody, Uuid } from "../core/schemas";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import {
  Actor,
  ActorBatch,
  ActorBatchResult,
  ActorList,
  ActorListQuery,
  ActorPatch,
  ActorUpsert,
  ActorUpsertResult,
  ByExternalBatch,
  ByExternalResult,
  Counters,
  CountersMany,
  CountersQuery,
  ExternalId,
} from "./schemas";
import type { ActorService } from "./service";

const tags = ["Community: actors"];

export function actorRoutes(actors: ActorService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .post("/actors", (c) => write(deps, c, 201, (p) => actors.upsert(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: ActorUpsert,
      response: { 201: ActorUpsertResult, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Upsert an actor by external_id (action social.create)",
        description: "201 {actor, created}: created is true on the first call. A repeat call overwrites display_name, avatar_url and metadata (omitted: null / {}) and emits actor.updated; is_private changes only when sent." + IDEMPOTENT,
      },
    })
    .post("/actors/batch", (c) => write(deps, c, 201, (p) => actors.upsertBatch(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: ActorBatch,
      response: { 201: ActorBatchResult, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Upsert 1-200 actors (action social.create)",
        description: "Each item is its own transaction (no wrapping transaction): 201 with per-item {index, success, actor, created, error}, succeeded and failed. 400 for a missing, empty or over-200 list, or an invalid item." + IDEMPOTENT,
      },
    })
    .post("/actors/by-external/batch", (c) => actors.byExternalBatch(requirePrincipal(c.principal), c.params.community_id, c.body), {
      params: CommunityParams,
      body: ByExternalBatch,
      response: { 200: ByExternalResult, ...errors },
      detail: { tags, summary: "Look actors up by external_id (action social.read)", description: "1-200 external ids (duplicates removed): the actors found in request order and the ids not found." },
    })
    .get("/actors", (c) => actors.list(requirePrincipal(c.principal), c.params.community_id, c.query), {
      params: CommunityParams,
      query: ActorListQuery,
      response: { 200: ActorList, ...errors },
      detail: { tags, summary: "List actors, newest first, or those named by ids (action social.list)", description: "With ids (at most 100 uuids): those actors in request order, unknown ids omitted, has_more false." },
    })
    .get("/actors/by-external/:external_id", (c) => actors.byExternal(requirePrincipal(c.principal), c.params.community_id, c.params.external_id), {
      params: t.Object({ community_id: Uuid(), external_id: ExternalId() }),
      response: { 200: Actor, ...errors },
      detail: { tags, summary: "Read an actor by external_id (action social.read)" },
    })
    .get("/actors/:actor_id", (c) => actors.get(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id), {
      params: ActorParams,
      response: { 200: Actor, ...errors },
      detail: { tags, summary: "Read an actor (action social.read)" },
    })
    .patch("/actors/:actor_id", (c) => write(deps, c, 200, (p) => actors.patch(p, c.params.community_id, c.params.actor_id, c.body)), {
      params: ActorParams,
      body: ActorPatch,
      response: { 200: Actor, ...errors, 409: ErrorBody },
      detail: { tags, summary: "Change an actor (action social.update)", description: "Only sent fields change; status is active, suspended or deleted (soft). Emits actor.updated when something changed." + IDEMPOTENT },
    })
    .delete("/actors/:actor_id", async (c) => {
      await actors.remove(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id);
      c.set.status = 204;
    }, {
      params: ActorParams,
      response: errors,
      detail: {
        tags,
        summary: "Delete an actor for good (action social.delete); 204",
        description: "Hard delete: its edges, follow requests, close-friends entries, hashtag follows and conversation memberships go too; the other actors' counters are corrected.",
        responses: noContent(),
      },
    })
    .get("/counters", (c) => actors.countersMany(requirePrincipal(c.principal), c.params.community_id, c.query), {
      params: CommunityParams,
      query: CountersQuery,
      response: { 200: CountersMany, ...errors },
      detail: { tags, summary: "Counters of up to 100 actors (action social.read)", description: "actor_ids de-duplicated; unknown ids are listed in missing." },
    })
    .get("/actors/:actor_id/counters", (c) => actors.counters(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id), {
      params: ActorParams,
      response: { 200: Counters, ...errors },
      detail: { tags, summary: "Counters of one actor (action social.read)" },
    });
}
