/** (Being built.) */
import { Elysia } from "elysia";
import type { AuthService } from "../service";

export function auditRoutes(_auth: AuthService) {
  return new Elysia();
}
