/** Invites and accept-invite. (Being built.) */
import type { AppContext } from "../../context";
import type { AuthService } from "./service";
import type { EmitAuthEvent } from "./users";

export class InviteService {
  constructor(
    private readonly ctx: AppContext,
    private readonly auth: AuthService,
    private readonly emit: EmitAuthEvent,
  ) {}
}
