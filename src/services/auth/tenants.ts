/** Tenants inside an App and their members. (Being built.) */
import type { AppContext } from "../../context";
import type { AuthService } from "./service";
import type { EmitAuthEvent } from "./users";

export class TenantService {
  constructor(
    private readonly ctx: AppContext,
    private readonly auth: AuthService,
    private readonly emit: EmitAuthEvent,
  ) {}
}
