/** (Being built.) */
import { Elysia } from "elysia";
import type { AuthService } from "../service";

export function mfaRoutes(_auth: AuthService) {
  return new Elysia();
}
