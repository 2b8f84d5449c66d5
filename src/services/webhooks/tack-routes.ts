/** Card-board (tack) webhook records. (Being built.) */
import { Elysia } from "elysia";
import type { SocialDeps as WebhookDeps } from "../social/deps";

export function tackWebhookRoutes(_deps: WebhookDeps) {
  return new Elysia();
}
