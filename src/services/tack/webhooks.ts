/**
 * The card board's (tack) webhook records, the board service's own webhook surface
 * (spec 2, "Card board": register (url*, events[], secret), list, update (URL, events,
 * active), delete), mounted under {tack_base_url} = /tack/api:
 *
 *   /tack/api/v1/workspaces/{workspace}/webhooks               GET list, POST register
 *   /tack/api/v1/workspaces/{workspace}/webhooks/{webhook_id}  GET, PATCH, DELETE
 *
 * A tack webhook is an ordinary webhook endpoint (product "tack", scope = one board
 * workspace, whose events it receives; before migration 0061 the scope was the platform
 * workspace, and 0061 moved those rows to a board workspace per platform workspace),
 * read and written through WebhookService (this service touches no webhook_* table) and
 * delivered by the shared engine, like the legacy records (webhooks/legacy.ts) are.
 * The shared surface is mounted for tack too (/tack/api/v1/workspaces/{workspace}/webhooks/
 * endpoints, events, event-types, test, rotate-secret, replay) over the same rows.
 *
 * Decisions the spec leaves open:
 * - Not deprecated: the spec lists these as the board's current routes and leaves the board
 *   out of the shared mechanism's scope list, so no Deprecation / Sunset headers.
 * - Record: {id, workspace_id, url, events, active, status, disabled_reason,
 *   signing_secret_hint, legacy_signature, created_at, updated_at}. id is whk_ for
 *   records registered here (the spec's prefix); the list shows every endpoint of the
 *   workspace's tack scope, so one made through the shared surface appears with its ep_ id
 *   (both surfaces share one cap, and a list that hid some of the ten would make the 409
 *   inexplicable). `active` is true exactly when the endpoint receives events (not paused,
 *   not auto-disabled); `status` is the shared record's: enabled | auto_disabled
 *   (disabled_reason failing), so a pause reads active false with status enabled.
 * - `secret` optional on register:
 *   - given: the caller's own secret signs deliveries. 16-256 visible ASCII characters
 *     (0x21-0x7E, no spaces). Stored encrypted with the master key, never echoed
 *     (signing_secret is null in the response). It keys the Standard Webhooks headers the
 *     way pre-move secrets do: receivers verify with "whsec_" + base64(secret). A secret
 *     that already is a Standard Webhooks secret ("whsec_" + base64 of 24-64 bytes) is used
 *     as such: verify with it unchanged. Deliveries ALSO carry
 *     X-Tack-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the secret
 *     string as given> (row legacy = 1, legacy_signature true): a caller-chosen secret is
 *     the board's historic scheme, and receivers written for it keep verifying unchanged
 *     while they move to the open scheme. Like every product's legacy header it stops after
 *     15 January 2027 (sender.ts).
 *   - omitted: a fresh whsec_ secret is generated and returned once (signing_secret);
 *     deliveries carry only the Standard Webhooks headers ("new endpoints get only the
 *     open-scheme headers").
 *   A later rotation goes through the shared rotate-secret route (whsec_ secret, grace
 *   period); X-Tack-Signature, if the record has it, is then keyed by the new secret.
 * - events: catalogue types of the card board (card.*, comment.created, list.*, project.*); unknown ones are
 *   400 naming the valid set; empty or omitted = every type, future ones included.
 * - PATCH {url, events, active}: active:false pauses and drops queued retries; active:true
 *   re-enables and clears the failure streak (consecutive_failures, first_failure_at,
 *   auto_disabled_at). The shared endpoint update, same state machine.
 * - DELETE: 204; the endpoint's deliveries (queued retries included) and attempts go too.
 * - {workspace} is the board workspace's name or ws_ id (see tackWorkspaceScope). Unknown
 *   workspace, another platform workspace's key and non-members: 404. Actions tack.webhooks.read / tack.webhooks.write; 403 SERVICE_NOT_ENABLED when
 *   the workspace has the card board switched off.
 * - At most 10 endpoints per workspace, counted with the shared surface's (409
 *   ENDPOINT_LIMIT_REACHED).
 * - List: the board's offset pages: limit (default 50, max 100), offset (default 0),
 *   {data, pagination: {total, limit, offset, has_more}}, oldest first.
 */
import type { AppContext } from "../../context";
import { invalidField, notFound } from "../../core/errors";
import { workspaceById, workspaceByRef } from "./board";
import { prefixedId } from "../../core/ids";
import { parseLimit } from "../../core/pagination";
import type { TackContext } from "./board/events";
import { type Actor, type EndpointRecord, type ResolvedScope, registerWebhookActions, webhookAction, type ScopeResolver, type WebhookService, generateSecret, SECRET_PREFIX, type Scope } from "../../kernel/webhooks";
import { tackWebhookView, type TackWebhookPage, type TackWebhookView } from "./webhook-views";

export const TACK_LIST_DEFAULT = 50;
export const TACK_LIST_MAX = 100;
export const SECRET_MIN = 16;
export const SECRET_MAX = 256;
/** Decoded key sizes the Standard Webhooks spec allows for a whsec_ secret. */
const STANDARD_KEY_MIN_BYTES = 24;
const STANDARD_KEY_MAX_BYTES = 64;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export interface TackRegisterInput {
  url?: unknown;
  events?: unknown;
  secret?: unknown;
}

export interface TackUpdateInput {
  url?: unknown;
  events?: unknown;
  active?: unknown;
}

/**
 * The card board's webhook scope: a board workspace. {workspace} (path parameter
 * :workspace_id) is the board workspace's name or ws_ id. A workspace API key sees its own
 * platform workspace's board workspaces (by name or id); console sessions and personal
 * tokens name one by id and must be members of its platform workspace. Unknown or foreign
 * board workspaces: 404; without the action 403; 403 SERVICE_NOT_ENABLED when the board is
 * off for the platform workspace. Scope: {product: "tack", scopeId: board workspace id,
 * workspaceId: its platform workspace} (audit entries go to the platform workspace).
 */
export function tackWorkspaceScope(m: TackContext): ScopeResolver {
  registerWebhookActions(m.ctx.actions, m.name);
  return async ({ principal, params }, access) => {
    const ref = params.workspace_id ?? "";
    const db = m.ctx.db;
    const board =
      principal.kind === "api_key" ? await workspaceByRef(db, principal.workspaceId, ref) : ref.startsWith("ws_") ? await workspaceById(db, ref) : null;
    if (!board) throw notFound("Workspace");
    const found = await m.guard(principal, board.owner_workspace_id, webhookAction(m.name, access));
    return { product: m.name, scopeId: board.id, workspaceId: found.id };
  };
}

export class TackWebhookService {
  constructor(
    readonly ctx: AppContext,
    private readonly api: WebhookService,
  ) {}

  private view(r: EndpointRecord): TackWebhookView {
    return tackWebhookView(r, this.api.endpoints.secretHint(r));
  }

  /** A webhook of this workspace's tack scope, or 404 (another workspace's or product's id too). */
  async row(scope: Scope, id: string): Promise<EndpointRecord> {
    const r = await this.api.endpoints.find(this.ctx.db, scope, id);
    if (!r) throw notFound("Webhook");
    return r;
  }

  // ------------------------------------------------------------------ validation

  /** The caller's own signing secret (see the module comment for the two accepted forms). */
  validateSecret(v: unknown): string {
    if (typeof v !== "string") throw invalidField("secret", "must be a string");
    if (v.length < SECRET_MIN || v.length > SECRET_MAX) throw invalidField("secret", `${SECRET_MIN}-${SECRET_MAX} characters`);
    if (!VISIBLE_ASCII.test(v)) throw invalidField("secret", "visible ASCII characters only (no spaces or control characters)");
    if (v.startsWith(SECRET_PREFIX)) {
      // Taken as a Standard Webhooks secret (its key is the base64-decoded rest), so the
      // rest must decode to a usable key.
      const b64 = v.slice(SECRET_PREFIX.length);
      const bytes = BASE64.test(b64) ? Buffer.from(b64, "base64").length : 0;
      if (bytes < STANDARD_KEY_MIN_BYTES || bytes > STANDARD_KEY_MAX_BYTES) {
        throw invalidField("secret", `a secret starting with ${SECRET_PREFIX} must be ${SECRET_PREFIX} + base64 of ${STANDARD_KEY_MIN_BYTES}-${STANDARD_KEY_MAX_BYTES} bytes`);
      }
    }
    return v;
  }

  private active(v: unknown): boolean | undefined {
    if (v === undefined) return undefined;
    if (typeof v !== "boolean") throw invalidField("active", "must be true or false");
    return v;
  }

  private offset(v: unknown): number {
    if (v === undefined || v === null || v === "") return 0;
    const n = typeof v === "number" ? v : Number(v);
    if (!Number.isSafeInteger(n) || n < 0) throw invalidField("offset", "an integer of 0 or more");
    return n;
  }

  // ------------------------------------------------------------------ operations

  async list(scope: Scope, q: { limit?: unknown; offset?: unknown }): Promise<TackWebhookPage> {
    const limit = parseLimit(q.limit, TACK_LIST_DEFAULT, TACK_LIST_MAX);
    const offset = this.offset(q.offset);
    const total = await this.api.endpoints.count(scope);
    const rows = await this.api.endpoints.pageByOffset(scope, limit, offset);
    return { data: rows.map((r) => this.view(r)), pagination: { total, limit, offset, has_more: offset + rows.length < total } };
  }

  async get(scope: Scope, id: string): Promise<TackWebhookView> {
    return this.view(await this.row(scope, id));
  }

  /**
   * Registers a webhook. Returns the record and the generated secret to show once, or null
   * when the caller supplied their own (it is never echoed).
   */
  async register(scope: ResolvedScope, input: TackRegisterInput, actor: Actor): Promise<{ view: TackWebhookView; secret: string | null }> {
    const url = this.api.endpoints.validateUrl(input.url);
    const events = input.events === undefined ? [] : this.api.endpoints.validateEventTypes(scope.product, input.events, "events");
    const own = input.secret === undefined || input.secret === null ? null : this.validateSecret(input.secret);
    const secret = own ?? generateSecret();
    const id = prefixedId("whk");
    // legacy: the row flag that adds X-Tack-Signature to every delivery (sender.ts).
    await this.api.endpoints.insertWithinCap(scope, actor, {
      id,
      url,
      description: "",
      eventTypes: events,
      secret,
      legacy: own !== null,
      auditMetadata: { url, event_types: events, own_secret: own !== null, surface: "tack" },
    });
    return { view: await this.get(scope, id), secret: own === null ? secret : null };
  }

  async update(scope: ResolvedScope, id: string, input: TackUpdateInput, actor: Actor): Promise<TackWebhookView> {
    await this.row(scope, id);
    const active = this.active(input.active);
    const events = input.events === undefined ? undefined : this.api.endpoints.validateEventTypes(scope.product, input.events, "events");
    // The shared update: url validation, re-enable (clears consecutive_failures,
    // first_failure_at, auto_disabled_at) and pause (drops queued retries).
    await this.api.endpoints.update(this.ctx.db, scope, id, { url: input.url, enabled: active, event_types: events }, actor);
    return this.get(scope, id);
  }

  async remove(scope: ResolvedScope, id: string, actor: Actor): Promise<void> {
    await this.row(scope, id);
    // Deliveries (queued retries included) and attempts go with the endpoint.
    await this.api.endpoints.remove(this.ctx.db, scope, id, actor);
  }
}
