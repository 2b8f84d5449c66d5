/**
 * First start: until an operator account exists, either create it from
 * BUNKER_ADMIN_EMAIL/BUNKER_ADMIN_PASSWORD, or mint a one-time setup token and print a
 * link; whoever holds it creates the operator account through the API
 * (POST /platform/v1/auth/setup) or the admin page. Ordinary sign-ups (CONSOLE_SIGNUP)
 * never close setup: only an operator does.
 */
import { ApiError } from "../../../core/errors";
import { hashToken, randomToken, safeEqual } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import type { AccountService } from "./accounts";
import type { RequestMeta } from "../../../kernel/tenancy";
import * as store from "./store/accounts";

const SETUP_KEY = "platform.setup_token_hash";

export class SetupService {
  constructor(
    private readonly ctx: AppContext,
    private readonly accounts: AccountService,
  ) {}

  async needsSetup(): Promise<boolean> {
    return (await store.countOperators(this.ctx.db)) === 0;
  }

  /**
   * Called at start-up. Returns the setup link when one was minted (printed by main), and
   * a warning when BUNKER_ADMIN_EMAIL could not be used.
   */
  async bootstrap(): Promise<{ created?: string; setupUrl?: string; warning?: string } | null> {
    if (!(await this.needsSetup())) {
      await store.deleteSetting(this.ctx.db, SETUP_KEY);
      return null;
    }
    const { adminEmail, adminPassword } = this.ctx.config;
    if (adminEmail && adminPassword) {
      const username = adminEmail.split("@")[0].replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 64) || "admin";
      const v = this.accounts.validateSignup({ email: adminEmail, username, password: adminPassword });
      try {
        const id = await this.accounts.createAccount({ ...v, password: adminPassword, display_name: "Operator", isOperator: true, onlyWithoutOperator: true });
        return { created: id };
      } catch (e) {
        // Someone signed up with that address (or username) first. Promoting their account
        // would hand the instance to whoever registered it: fall back to the setup link.
        if (!(e instanceof ApiError) || (e.code !== "EMAIL_TAKEN" && e.code !== "USERNAME_TAKEN")) throw e;
        return { ...(await this.mintSetupLink()), warning: `BUNKER_ADMIN_EMAIL was not used: ${e.message.toLowerCase()} (not an operator); create the operator with the setup link` };
      }
    }
    return this.mintSetupLink();
  }

  /** A new token every start: only the hash is kept, so the link must come from this run's log. */
  private async mintSetupLink() {
    const token = randomToken(32);
    await store.putSetting(this.ctx.db, SETUP_KEY, hashToken(token), this.ctx.clock.iso());
    return { setupUrl: `${this.ctx.config.publicUrl}/admin/#setup=${token}` };
  }

  async complete(b: { setup_token: string; email: string; username: string; password: string; display_name?: string | null }, meta: RequestMeta) {
    const invalid = () => new ApiError(400, "INVALID_SETUP_TOKEN", "Setup token is invalid or setup is already complete");
    const stored = await store.getSetting(this.ctx.db, SETUP_KEY);
    if (!stored || !safeEqual(stored, hashToken(b.setup_token)) || !(await this.needsSetup())) throw invalid();
    const v = this.accounts.validateSignup(b);
    const id = await this.accounts.createAccount({ ...b, ...v, isOperator: true, onlyWithoutOperator: true });
    await store.deleteSetting(this.ctx.db, SETUP_KEY);
    return this.accounts.startSession(id, 30 * 24 * 3600, meta);
  }
}
