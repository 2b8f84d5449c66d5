/** Admin user CRUD (auth_admin_users_endpoint), callable with M2M tokens. (Being built.) */
import type { AppContext } from "../../context";
import type { AuthService } from "./service";
import type { EmitAuthEvent } from "./users";

export class AdminUserService {
  constructor(
    private readonly ctx: AppContext,
    private readonly auth: AuthService,
    private readonly emit: EmitAuthEvent,
  ) {}
}
