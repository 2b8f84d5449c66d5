/** Roles, permissions and authorization checks. (Being built.) */
import type { AppContext } from "../../context";
import type { AuthService } from "./service";
import type { EmitAuthEvent } from "./users";

export class RbacService {
  constructor(
    private readonly ctx: AppContext,
    private readonly auth: AuthService,
    private readonly emit: EmitAuthEvent,
  ) {}
}
