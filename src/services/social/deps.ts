/** What the community service gets from app.ts. */
import type { AppContext } from "../../context";
import type { Platform } from "../platform/service";
import type { WebhookEngine } from "../webhooks/engine";
import type { EventCatalogue } from "../webhooks/catalogue";
import type { LegacyWebhookService } from "../webhooks/legacy";
import type { WebhookService } from "../webhooks/service";

export interface SocialDeps {
  ctx: AppContext;
  platform: Platform;
  /** Shared webhook endpoints / events log. */
  webhookApi: WebhookService;
  /** The delivery engine (emit, sendOnce). */
  engine: WebhookEngine;
  catalogue: EventCatalogue;
  legacy: LegacyWebhookService;
}
