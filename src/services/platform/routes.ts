/** Mounts every platform route group under /platform. */
import { Elysia } from "elysia";
import type { Platform } from "./service";
import { adminRoutes } from "./routes/admin";
import { authRoutes } from "./routes/auth";
import { introspectRoutes } from "./routes/introspect";
import { workspaceRoutes } from "./routes/workspaces";

export function platformRoutes(platform: Platform) {
  return new Elysia({ prefix: "/platform" })
    .use(authRoutes(platform))
    .use(introspectRoutes(platform))
    .use(workspaceRoutes(platform))
    .use(adminRoutes(platform));
}
