/** Mounts every Auth route group under /auth. */
import { Elysia } from "elysia";
import type { AuthService } from "./service";
import { appRoutes } from "./routes/apps";
import { sessionRoutes } from "./routes/session";
import { wellKnownRoutes } from "./routes/well-known";

export function authRoutes(auth: AuthService) {
  return new Elysia({ prefix: "/auth" }).use(appRoutes(auth)).use(wellKnownRoutes(auth)).use(sessionRoutes(auth));
}
