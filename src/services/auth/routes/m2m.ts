/** (Being built.) */
import { Elysia } from "elysia";
import type { AuthService } from "../service";

export function m2mRoutes(_auth: AuthService) {
  return new Elysia();
}
