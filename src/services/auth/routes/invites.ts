/** (Being built.) */
import { Elysia } from "elysia";
import type { AuthService } from "../service";

export function invitesRoutes(_auth: AuthService) {
  return new Elysia();
}
