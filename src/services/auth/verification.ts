/** Contact verification codes and end-user password reset. (Being built.) */
import type { AppContext } from "../../context";
import type { LoadedApp } from "./apps";
import type { AuthService } from "./service";
import type { SignupHook } from "./signin";
import type { UserView } from "./store/users";
import type { EmitAuthEvent } from "./users";

export class VerificationService implements SignupHook {
  constructor(
    private readonly ctx: AppContext,
    private readonly auth: AuthService,
    private readonly emit: EmitAuthEvent,
  ) {}

  afterSignup(_app: LoadedApp, _user: UserView) {}
}
