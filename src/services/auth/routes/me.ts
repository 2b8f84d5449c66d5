/** (Being built.) */
import { Elysia } from "elysia";
import type { AuthService } from "../service";

export function meRoutes(_auth: AuthService) {
  return new Elysia();
}
