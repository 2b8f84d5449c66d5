/** The community (social) service's routes. (Being built: communities and community-scoped webhooks.) */
import { Elysia } from "elysia";
import type { SocialDeps } from "./deps";

export function socialRoutes(_deps: SocialDeps) {
  return new Elysia();
}
