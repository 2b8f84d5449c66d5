/**
 * Community part 2 (content): the parts and routes of posts, comments, reactions and the
 * rest, gathered here so that module.ts and routes.ts each need one line for them.
 */
import { Elysia } from "elysia";
import { MULTIPART_TYPE, type BodyRoute } from "../../core/request-body";
import type { JobDefinition } from "../../core/scheduler";
import type { WebhookEngine } from "../../kernel/webhooks";
import type { Lane } from "./actors/lane";
import type { LaneRouteDeps } from "./core/routes";
import { commentRoutes } from "./comments/routes";
import { CommentService } from "./comments/service";
import { engageRoutes } from "./engage/routes";
import { EngageService } from "./engage/service";
import { feedRoutes } from "./feeds/routes";
import { FeedService } from "./feeds/service";
import { notificationRoutes } from "./notifications/routes";
import { NotificationService } from "./notifications/service";
import { flagRoutes, moderationAdminRoutes } from "./moderation/routes";
import { holdFlag, screen } from "./moderation/keywords";
import { ModerationService } from "./moderation/service";
import { assetRoutes } from "./assets/routes";
import { ASSET_MAX_BYTES, AssetService } from "./assets/service";
import { hideRoutes } from "./hides/routes";
import { HideService } from "./hides/service";
import { postRoutes } from "./posts/routes";
import { PostService } from "./posts/service";

export interface ContentParts {
  posts: PostService;
  comments: CommentService;
  engage: EngageService;
  feeds: FeedService;
  notifications: NotificationService;
  moderation: ModerationService;
  assets: AssetService;
  hides: HideService;
}

export function contentParts(lane: Lane, engine: WebhookEngine): ContentParts {
  // Content screens its text with the keyword filters, which moderation owns.
  const posts = new PostService(lane, engine, { screen, hold: holdFlag });
  return { posts, comments: new CommentService(posts), engage: new EngageService(posts), feeds: new FeedService(posts), notifications: new NotificationService(lane), moderation: new ModerationService(posts), assets: new AssetService(posts), hides: new HideService(posts) };
}

export function contentJobs(parts: ContentParts): JobDefinition[] {
  return [
    { name: "social.posts.publish", schedule: "*/5 * * * * *", run: async () => void (await parts.posts.publishDue()) },
    { name: "social.assets.process", schedule: "*/5 * * * * *", run: async () => void (await parts.assets.processPending()) },
  ];
}

/** Upload routes (multipart, larger cap than the JSON default). */
export const CONTENT_BODY_ROUTES: BodyRoute[] = [
  // Multipart adds a boundary and part headers around the file; the service checks the file itself.
  { method: "POST", path: "/social/v1/communities/:community_id/assets", types: [MULTIPART_TYPE], maxBytes: ASSET_MAX_BYTES + 64 * 1024 },
  // Two-step upload: the raw bytes, any type (sniffed from the bytes); the handler reads them.
  { method: "PUT", path: "/social/v1/communities/:community_id/assets/:asset_id/upload", types: ["application/octet-stream"], maxBytes: ASSET_MAX_BYTES, raw: true },
];

export function contentRoutes(parts: ContentParts, deps: LaneRouteDeps) {
  return new Elysia().use(postRoutes(parts.posts, deps)).use(commentRoutes(parts.comments, deps)).use(engageRoutes(parts.engage, deps)).use(feedRoutes(parts.feeds, deps)).use(notificationRoutes(parts.notifications, deps))
    .use(flagRoutes(parts.moderation, deps))
    .use(moderationAdminRoutes(parts.moderation, deps))
    .use(assetRoutes(parts.assets, deps))
    .use(hideRoutes(parts.hides, deps));
}
