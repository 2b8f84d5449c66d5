/**
 * The webhook room's one public face (kernel/webhooks): what products use to declare their
 * events, emit them, mount their webhook scopes and read webhook data, and what createApp
 * uses to build the engine. Nothing outside this folder imports its other files.
 */
export {
  ChangedFields,
  defineWebhookProduct,
  emitEvent,
  EventCatalogue,
  EXAMPLE_T0,
  EXAMPLE_T1,
  FieldChanges,
  productEmitter,
  type EventData,
  type EventDefinition,
  type EventEmitter,
  type EventListeners,
  withListeners,
  type WebhookProduct,
} from "./catalogue";
export { WebhookEngine, type WebhookEngineOptions } from "./engine";
export { type Actor, type EndpointRecord, type EventTypeSource, type ResolvedScope } from "./endpoints";
export { URL_MAX } from "./limits";
export { EndpointId, LegacyWebhookId } from "./ids";
export { LEGACY_SUNSET, LegacyWebhookService } from "./legacy";
export { deprecationHeaders, legacyWebhookRoutes } from "./legacy-routes";
export { webhooksModule, type WebhookParts } from "./module";
export { paramsOf, publicEventTypesRoute, webhookRoutes } from "./routes";
export { registerWebhookActions, webhookAction, workspaceScope, type Access, type ScopeResolver } from "./scopes";
export { generateSecret, SECRET_PREFIX, TIMESTAMP_TOLERANCE_SEC, verifyStandard } from "./signing";
export { WebhookService } from "./service";
export { MAX_ENDPOINTS_PER_SCOPE, type Product, type Scope } from "./types";
export type { EndpointAttemptRow } from "./store/queue";
