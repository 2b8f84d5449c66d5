/** Routes of moderation: POST /flags (customer lane); queue, actions and keyword filters (admin lane). */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { JsonObject } from "../../../access/schemas";
import { principalPlugin } from "../../../access/http";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { CommunityParams, ErrorBody, errors, Pagination, PageQuery, Uuid, UuidOut, writeErrors } from "../core/schemas";
import { ACTIONS, REASONS, type ModerationService } from "./service";

const tags = ["Community: moderation"];
const AdminParams = t.Object({ workspace_id: Uuid(), community_id: Uuid() });

const Flag = t.Object({
  id: UuidOut(),
  community_id: UuidOut(),
  reporter_actor_id: t.Nullable(UuidOut("null for flags raised by a keyword filter")),
  target_type: t.String({ description: "post | comment | actor" }),
  target_id: UuidOut(),
  target_actor_id: t.Nullable(UuidOut("The author, or the actor flagged")),
  reason: t.String(),
  note: t.Nullable(t.String()),
  status: t.String({ description: "open | resolved | dismissed" }),
  auto_hidden: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String(),
});

const Action = t.Object({
  id: UuidOut(),
  community_id: UuidOut(),
  action: t.String({ description: ACTIONS.join(" | ") }),
  target_type: t.String(),
  target_id: UuidOut(),
  target_actor_id: t.Nullable(UuidOut()),
  flag_id: t.Nullable(UuidOut()),
  moderator_actor_id: t.Null(),
  moderator_external_id: t.Nullable(t.String()),
  reason: t.Nullable(t.String()),
  data: JsonObject(),
  flags_closed: t.Integer(),
  created_at: t.String(),
});

const Keyword = t.Object({ id: UuidOut(), community_id: UuidOut(), keyword: t.String(), action: t.String({ description: "block | hold" }), created_at: t.String() });

export function flagRoutes(moderation: ModerationService, deps: LaneRouteDeps) {
  return laneBase(deps).post("/flags", (c) => write(deps, c, 201, (p) => moderation.flag(p, c.params.community_id, c.body)), {
    params: CommunityParams,
    body: t.Object({
      reporter_actor_id: Uuid(),
      target_type: t.String({ description: "post | comment | actor" }),
      target_id: Uuid("The post, comment or actor"),
      reason: t.String({ description: REASONS.filter((r) => r !== "keyword_filter").join(" | ") }),
      note: t.Optional(t.Nullable(t.String({ description: "Up to 2000 characters" }))),
    }),
    response: { 201: t.Object({ flag: Flag, created: t.Boolean() }), ...writeErrors, 422: ErrorBody },
    detail: {
      tags,
      summary: "Flag a post, comment or actor (action social.create)",
      description: "One open flag per reporter and target. Reaching the community's flag_auto_hide_threshold distinct reporters hides a post or comment (flag.created data.auto_hidden). 422 CANNOT_FLAG_SELF." + IDEMPOTENT,
    },
  });
}

export function moderationAdminRoutes(moderation: ModerationService, deps: LaneRouteDeps) {
  return new Elysia({ prefix: "/social/v1/workspaces/:workspace_id/communities/:community_id/moderation" })
    .use(principalPlugin(deps.principals))
    .guard(secured(PLATFORM_CALLER))
    .get("/queue", (c) => moderation.queue(requirePrincipal(c.principal), c.params.workspace_id, c.params.community_id, c.query), {
      params: AdminParams,
      query: PageQuery,
      response: {
        200: t.Object({
          data: t.Array(
            t.Object({
              target_type: t.String(),
              target_id: UuidOut(),
              target_actor_id: t.Nullable(UuidOut()),
              flag_count: t.Integer(),
              reporter_count: t.Integer(),
              reasons: t.Record(t.String(), t.Integer()),
              auto_hidden: t.Boolean(),
              first_flagged_at: t.String(),
              last_flagged_at: t.String(),
              flags: t.Array(Flag),
            }),
          ),
          pagination: Pagination,
        }),
        ...errors,
      },
      detail: { tags, summary: "Review queue: targets with open flags, oldest first (action social.list)" },
    })
    .post("/actions", (c) => write(deps, c, 201, (p) => moderation.act(p, c.params.workspace_id, c.params.community_id, c.body)), {
      params: AdminParams,
      body: t.Object({
        action: t.String({ description: ACTIONS.join(" | ") }),
        target_type: t.Optional(t.String({ description: "post | comment | actor (or give flag_id)" })),
        target_id: t.Optional(Uuid("The post, comment or actor")),
        flag_id: t.Optional(t.Nullable(Uuid("Act on this flag's target"))),
        reason: t.Optional(t.Nullable(t.String())),
        moderator_external_id: t.Optional(t.Nullable(t.String())),
        shadow: t.Optional(t.Boolean({ description: "ban: shadow-ban instead of suspending" })),
        duration_s: t.Optional(t.Nullable(t.Integer({ description: "ban with shadow: seconds until it lapses; omitted = indefinite" }))),
      }),
      response: { 201: Action, ...writeErrors, 422: ErrorBody },
      detail: {
        tags,
        summary: "Apply a moderation action (action social.update)",
        description: "hide / remove a post or comment; restore it (or an actor: active again, shadow ban lifted); warn; ban the target actor or author (suspend, or shadow-ban with shadow true); dismiss the flags. Emits moderation.action.applied and flag.updated." + IDEMPOTENT,
      },
    })
    .get("/keywords", (c) => moderation.keywords(requirePrincipal(c.principal), c.params.workspace_id, c.params.community_id), {
      params: AdminParams,
      response: { 200: t.Object({ data: t.Array(Keyword) }), ...errors },
      detail: { tags, summary: "Keyword filters, alphabetical (action social.read)" },
    })
    .post("/keywords", (c) => write(deps, c, 201, (p) => moderation.addKeyword(p, c.params.workspace_id, c.params.community_id, c.body)), {
      params: AdminParams,
      body: t.Object({ keyword: t.String({ description: "1-100 characters; lowercased; matched as whole words" }), action: t.Optional(t.String({ description: "hold (default: written hidden and queued) | block (422 CONTENT_BLOCKED)" })) }),
      response: { 201: Keyword, ...writeErrors },
      detail: { tags, summary: "Add or change a keyword filter (action social.update)", description: "Idempotent on the keyword." + IDEMPOTENT },
    })
    .delete("/keywords/:keyword_id", async (c) => {
      await moderation.removeKeyword(requirePrincipal(c.principal), c.params.workspace_id, c.params.community_id, c.params.keyword_id);
      c.set.status = 204;
    }, {
      params: t.Object({ ...AdminParams.properties, keyword_id: Uuid() }),
      response: errors,
      detail: { tags, summary: "Remove a keyword filter (action social.update); 204 always", responses: noContent() },
    });
}
