/** Routes of feeds: /actors/{actor_id}/feeds/home and /feeds/discover. */
import { t } from "../../../core/schema";
import { requirePrincipal } from "../../../access/principal";
import { laneBase, type LaneRouteDeps } from "../core/routes";
import { ActorParams, CommunityParams, errors, PageQuery, Uuid } from "../core/schemas";
import { FeedPage } from "./schemas";
import type { FeedService } from "./service";

const tags = ["Community: feeds"];

/** A feed page's JSON as built (and checked against FeedPage) by FeedService, or kept by its page cache. */
const json = (body: string) => new Response(body, { headers: { "content-type": "application/json" } });

export function feedRoutes(feeds: FeedService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .get("/actors/:actor_id/feeds/home", async (c) => json(await feeds.home(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query)), {
      params: ActorParams,
      query: PageQuery,
      response: { 200: FeedPage, ...errors },
      detail: {
        tags,
        summary: "Home feed: followed actors' and hashtags' posts and the actor's own, newest first (action social.list)",
        description: "Visibility-checked (followers, close friends, private authors), minus muted and blocked actors; shadow-banned actors reach only themselves. Cursor pages are stable while new posts arrive.",
      },
    })
    .get("/feeds/discover", async (c) => json(await feeds.discover(requirePrincipal(c.principal), c.params.community_id, c.query)), {
      params: CommunityParams,
      query: t.Object({
        ...PageQuery.properties,
        ranking: t.Optional(t.String({ description: "latest (default) | hot | top" })),
        window: t.Optional(t.String({ description: "hot and top: 1h | 24h | 7d (default) | 30d | all" })),
        actor_id: t.Optional(Uuid("Viewer: applies its mutes and blocks")),
      }),
      response: { 200: FeedPage, ...errors },
      detail: {
        tags,
        summary: "Discover: ranked public posts (action social.list)",
        description:
          "E = reactions + 2 x comments + 3 x reposts. top: E over the newest 10,000 posts of the window. hot: log10(max(1, 3 + E)) / (age_hours + 2)^1.8 over the newest 1,000 posts of the window, age measured at the first page's time (kept in the cursor).",
      },
    });
}
