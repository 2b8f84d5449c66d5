/**
 * Console sessions as principals: the resolver the platform hands to the kernel's tenancy
 * (Authz.acceptSessions), since console accounts and their sessions are the platform's.
 * A verified JWT still needs a live session row (logout and reset revoke it) and an active
 * account.
 */
import type { Principal } from "../../../access/principal";
import type { AppContext } from "../../../context";
import { assertAccountActive, type SessionResolver } from "../../../kernel/tenancy";
import * as accounts from "./store/accounts";
import type { SessionTokens } from "./tokens";

export function sessionPrincipals(ctx: AppContext, tokens: SessionTokens): SessionResolver {
  return async (token): Promise<Principal | null> => {
    const claims = await tokens.verifyAccess(token);
    if (!claims) return null;
    const s = await accounts.sessionForAuth(ctx.db, claims.sid);
    if (!s || s.revoked_at || s.expires_at <= ctx.clock.nowMs() || s.account_id !== claims.sub) return null;
    assertAccountActive(s.status);
    return { kind: "session", accountId: s.account_id, sessionId: s.session_id, isOperator: !!s.is_operator };
  };
}
