/** MFA factors (TOTP, email), sign-in challenges, recovery codes and step-up. (Being built.) */
import type { RequestMeta } from "../../access/http";
import type { AppContext } from "../../context";
import type { LoadedApp } from "./apps";
import type { AuthService } from "./service";
import type { MfaChallengeResponse, MfaGate } from "./signin";
import type { UserView } from "./store/users";

export class MfaService implements MfaGate {
  constructor(
    private readonly ctx: AppContext,
    private readonly auth: AuthService,
  ) {}

  async challengeFor(_app: LoadedApp, _user: UserView, _tenantId: string | null, _meta: RequestMeta): Promise<MfaChallengeResponse | null> {
    return null;
  }
}
