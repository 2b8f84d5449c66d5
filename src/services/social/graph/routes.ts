/** Routes of the actor graph: follows and follow requests, mutes, blocks, restricts, close friends. */
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { ActorParams, CommunityParams, ErrorBody, errors, PageQuery, PairParams } from "../core/schemas";
import type { EdgeService } from "./edges";
import type { FollowService } from "./follows";
import {
  ActorEdgeBody,
  CloseFriendBody,
  CloseFriendPage,
  CloseFriendParams,
  EdgePage,
  EdgePageQuery,
  EdgeResult,
  FollowBatch,
  FollowBatchResult,
  FollowBody,
  FollowRequestPage,
  FollowResult,
  RequestParams,
} from "./schemas";

const followTags = ["Community: follows"];
const edgeTags = ["Community: mutes, blocks, restricts"];
const cfTags = ["Community: close friends"];
const createErrors = { ...errors, 409: ErrorBody, 422: ErrorBody };
const del = { response: errors };

export function followRoutes(follows: FollowService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .post("/follows", (c) => write(deps, c, 201, (p) => follows.follow(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: FollowBody,
      response: { 201: FollowResult, ...createErrors },
      detail: {
        tags: followTags,
        summary: "Follow an actor (action social.create)",
        description:
          "Idempotent. A private destination gets a pending follow request ({status: pending, edge: null}; edge.follow.requested); otherwise the edge is created (edge.follow.created) and both counters move. 409 BLOCKED when either side blocks the other; 422 for a self-follow." + IDEMPOTENT,
      },
    })
    .post("/follows/batch", (c) => write(deps, c, 201, (p) => follows.followBatch(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: FollowBatch,
      response: { 201: FollowBatchResult, ...errors, 409: ErrorBody },
      detail: {
        tags: followTags,
        summary: "Follow 1-200 pairs (action social.create)",
        description: "Each item is its own transaction; a failing item (404 actor, 409 blocked, 422 self) carries its error. suppress_notifications skips edge.follow.created; counters still update." + IDEMPOTENT,
      },
    })
    .post("/follow-requests/:dst_actor_id/:src_actor_id/approve", (c) => write(deps, c, 201, (p) => follows.approve(p, c.params.community_id, c.params.dst_actor_id, c.params.src_actor_id)), {
      params: RequestParams,
      response: { 201: EdgeResult, ...errors, 409: ErrorBody },
      detail: { tags: followTags, summary: "Approve a follow request (action social.create)", description: "Creates the edge: edge.follow.request_approved then edge.follow.created. 404 when no request (and no follow) exists." + IDEMPOTENT },
    })
    .delete("/follow-requests/:dst_actor_id/:src_actor_id", async (c) => {
      await follows.decline(requirePrincipal(c.principal), c.params.community_id, c.params.dst_actor_id, c.params.src_actor_id);
      c.set.status = 204;
    }, { params: RequestParams, ...del, detail: { tags: followTags, summary: "Decline a follow request (action social.delete); 204, no notification", responses: noContent() } })
    .get("/actors/:actor_id/follow-requests", (c) => follows.requests(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query), {
      params: ActorParams,
      query: PageQuery,
      response: { 200: FollowRequestPage, ...errors },
      detail: { tags: followTags, summary: "Incoming follow requests, newest first (action social.list)" },
    })
    .delete("/follows/:src_actor_id/:dst_actor_id", async (c) => {
      await follows.unfollow(requirePrincipal(c.principal), c.params.community_id, c.params.src_actor_id, c.params.dst_actor_id);
      c.set.status = 204;
    }, { params: PairParams, ...del, detail: { tags: followTags, summary: "Unfollow (action social.delete); 204 always", description: "Also withdraws a pending request of the pair. Emits edge.follow.deleted when a follow existed.", responses: noContent() } })
    .get("/actors/:actor_id/following", (c) => follows.following(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query), {
      params: ActorParams,
      query: EdgePageQuery("dst_actor"),
      response: { 200: EdgePage, ...errors },
      detail: { tags: followTags, summary: "Follow edges of the actor, newest first (action social.list)", description: "400 INVALID_CURSOR for legacy raw-id cursors, INVALID_EXPAND for an expand other than dst_actor." },
    })
    .get("/actors/:actor_id/followers", (c) => follows.followers(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query), {
      params: ActorParams,
      query: EdgePageQuery("src_actor"),
      response: { 200: EdgePage, ...errors },
      detail: { tags: followTags, summary: "Follow edges to the actor, newest first (action social.list)", description: "expand=src_actor adds the follower." },
    });
}

export function edgeRoutes(edges: EdgeService, follows: FollowService, deps: LaneRouteDeps) {
  let app = laneBase(deps);
  for (const [kind, path, what] of [
    ["mute", "mutes", "Mute an actor: silent and one-directional"],
    ["block", "blocks", "Block an actor: removes follows both ways, pending requests and close-friends entries; afterwards follows, mutes, restricts, close friends and messages between the pair are 409"],
    ["restrict", "restricts", "Restrict an actor: their conversations with the owner go to requests (and, with posts, their comments need approval)"],
  ] as const) {
    app = app
      .post(`/${path}`, (c) => write(deps, c, 201, (p) => edges.create(p, c.params.community_id, kind, c.body)), {
        params: CommunityParams,
        body: ActorEdgeBody,
        response: { 201: EdgeResult, ...createErrors },
        detail: { tags: edgeTags, summary: `${what} (action social.create)`, description: `Idempotent: 201 {edge, created}. 400 invalid ids; 404 unknown actor; ${kind === "block" ? "" : "409 BLOCKED when a block exists either way; "}422 for the actor itself.${IDEMPOTENT}` },
      })
      .delete(`/${path}/:src_actor_id/:dst_actor_id`, async (c) => {
        await edges.remove(requirePrincipal(c.principal), c.params.community_id, kind, c.params.src_actor_id, c.params.dst_actor_id);
        c.set.status = 204;
      }, { params: PairParams, ...del, detail: { tags: edgeTags, summary: `Remove a ${kind} (action social.delete); 204 always`, responses: noContent() } })
      .get(`/actors/:actor_id/${path}`, (c) => follows.edgePage(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query, "out", kind), {
        params: ActorParams,
        query: EdgePageQuery("dst_actor"),
        response: { 200: EdgePage, ...errors },
        detail: { tags: edgeTags, summary: `The actor's ${path}, newest first (action social.list)` },
      }) as unknown as typeof app;
  }
  return app
    .post("/close-friends", (c) => write(deps, c, 204, (p) => edges.addCloseFriend(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: CloseFriendBody,
      response: { ...createErrors },
      detail: { tags: cfTags, summary: "Add a close friend (action social.create); 204, idempotent", description: "422 for the owner itself; 409 BLOCKED when a block exists either way; 404 unknown actor." + IDEMPOTENT, responses: noContent() },
    })
    .delete("/close-friends/:owner_actor_id/:member_actor_id", async (c) => {
      await edges.removeCloseFriend(requirePrincipal(c.principal), c.params.community_id, c.params.owner_actor_id, c.params.member_actor_id);
      c.set.status = 204;
    }, { params: CloseFriendParams, ...del, detail: { tags: cfTags, summary: "Remove a close friend (action social.delete); 204 always", responses: noContent() } })
    .get("/actors/:actor_id/close-friends", (c) => edges.closeFriends(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query), {
      params: ActorParams,
      query: PageQuery,
      response: { 200: CloseFriendPage, ...errors },
      detail: { tags: cfTags, summary: "The actor's close friends, newest first (action social.list)" },
    });
}
