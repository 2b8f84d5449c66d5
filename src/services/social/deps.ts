/** What the community service gets from app.ts. */
import type { AppContext } from "../../context";
import type { Platform } from "../platform/service";
import type { WebhookEngine } from "../webhooks/engine";
import type { EventCatalogue } from "../webhooks/catalogue";
import type { LegacyWebhookService } from "../webhooks/legacy";
import type { WebhookService } from "../webhooks/service";
import type { AppDirectory } from "./communities";

export interface SocialDeps {
  ctx: AppContext;
  platform: Platform;
  /** Shared webhook endpoints / events log. */
  webhookApi: WebhookService;
  /** The delivery engine (emit, sendOnce). */
  engine: WebhookEngine;
  catalogue: EventCatalogue;
  legacy: LegacyWebhookService;
  /**
   * The Auth service's Apps (AuthService.apps), to check a community's app_id: it must be an
   * App of the same workspace. Without it, app_id is stored as given (after the UUID check).
   */
  apps?: AppDirectory;
}
