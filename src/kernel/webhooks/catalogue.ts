/**
 * The app's webhook products and their event-type catalogues, served by GET
 * {scope}/webhooks/event-types and used to validate endpoint subscriptions. An instance is
 * built per app (no module-level state): mount() adds each service module's
 * WebhookProduct, which the product defines in its own folder with defineWebhookProduct.
 *
 * `ping` is deliberately absent: it is sent only by the test operation and is not
 * subscribable.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import type { Sql } from "../../core/db";
import type { EventTypeInfo, Product, Scope } from "./types";

/**
 * One event type as its product declares it, once: the schema of its `data` types the
 * product's emits (EventData), and a test checks the example against it. The catalogue the
 * API serves keeps the type, description and example only.
 */
export interface EventDefinition<T extends string = string, S extends TSchema = TSchema> extends EventTypeInfo {
  type: T;
  data: S;
}

/** What a product brings to the webhook engine (defined in the product's folder, e.g. services/mail/events.ts). */
export interface WebhookProduct<E extends readonly EventDefinition[] = readonly EventDefinition[]> {
  /** Scope namespace and action prefix (<product>.webhooks.read), e.g. "tack". */
  product: Product;
  /** Name in OpenAPI tags, e.g. "Card board". */
  label: string;
  /** Header of the pre-move signature scheme on legacy endpoints, e.g. "x-tack-signature". */
  legacyHeader: string;
  /**
   * An envelope field naming the scope beside id, type and created_at (the community's
   * community_id): the event's data.<field> when it has one, else the scope id.
   */
  envelopeScopeField?: string;
  /** The product's event types, in catalogue order. */
  events: E;
}

/** Event type -> the `data` it carries, of a product defined with defineWebhookProduct. */
export type EventData<P extends WebhookProduct> = { [D in P["events"][number] as D["type"]]: Static<D["data"]> };

/**
 * A product's emit, bound to its name: records `type` for the scope's endpoints on `t`, the
 * transaction of the change it describes. An undeclared type or a payload that is not its
 * declared data fails the type check; an undeclared type throws at run time too.
 */
export type EventEmitter<P extends WebhookProduct> = <K extends keyof EventData<P> & string>(t: Sql, scopeId: string, type: K, data: EventData<P>[K]) => Promise<{ id: string }>;

/** What productEmitter needs of the engine (WebhookEngine.emit: untyped, any product). */
export interface RawEmit {
  emit(t: Sql, scope: Scope, type: string, data: unknown): Promise<{ id: string }>;
}

/**
 * Records one of `p`'s events through the engine (a product's emit wrapper calls it). The
 * engine is the caller's at each call: social's follow service hands in its own.
 */
export function emitEvent<P extends WebhookProduct, K extends keyof EventData<P> & string>(engine: RawEmit, p: P, t: Sql, scopeId: string, type: K, data: EventData<P>[K]): Promise<{ id: string }> {
  // A programming error (the type check catches it first): nothing may reach endpoints
  // under a type their subscriptions could not name.
  if (!p.events.some((e) => e.type === type)) throw new Error(`${p.product} declares no event type ${JSON.stringify(type)}`);
  return engine.emit(t, { product: p.product, scopeId }, type, data);
}

/**
 * Reactions of the emitting module to its own events that must commit or roll back with
 * them (social's follow notifications): each runs on the emitting transaction right after
 * its event is recorded, typed by the event's data.
 */
export type EventListeners<P extends WebhookProduct> = { [K in keyof EventData<P>]?: (t: Sql, scopeId: string, data: EventData<P>[K]) => Promise<void> };

/** `emit`, then the listener of the event's type on the same transaction. */
export const withListeners =
  <P extends WebhookProduct>(emit: EventEmitter<P>, listeners: EventListeners<P>): EventEmitter<P> =>
  async (t, scopeId, type, data) => {
    const out = await emit(t, scopeId, type, data);
    await listeners[type]?.(t, scopeId, data);
    return out;
  };

/** The typed emit of one product over the engine. */
export const productEmitter =
  <P extends WebhookProduct>(engine: RawEmit, p: P): EventEmitter<P> =>
  (t, scopeId, type, data) =>
    emitEvent(engine, p, t, scopeId, type, data);

/** Event type names: dot-separated lowercase segments, at least two (e.g. entry.created). */
const TYPE_RE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
/** Sent by the test operation only; never part of a catalogue. */
export const RESERVED_EVENT_TYPES: readonly string[] = ["ping"];

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Example times of the built-in catalogues (an event and a later change). */
export const EXAMPLE_T0 = "2026-11-02T09:14:05.000Z";
export const EXAMPLE_T1 = "2026-11-02T09:20:41.000Z";

/**
 * A product's webhook definition, checked and frozen (a product module exports one); its
 * event types keep their literal names, for EventData. Throws on a malformed product name or
 * event type, like EventCatalogue.register.
 */
export function defineWebhookProduct<const E extends readonly EventDefinition[]>(p: WebhookProduct<E>): WebhookProduct<E> {
  if (!/^[a-z][a-z0-9_]*$/.test(p.product)) throw new Error(`malformed product name: ${JSON.stringify(p.product)}`);
  if (!/^x-[a-z0-9-]+$/.test(p.legacyHeader)) throw new Error(`malformed legacy header for ${p.product}: ${p.legacyHeader}`);
  for (const e of p.events) if (!e.data || typeof e.data !== "object") throw new Error(`event type ${e.type} needs a schema of its data`);
  // Validates the events the way the catalogue will (duplicates, reserved and malformed types).
  new EventCatalogue().addProduct({ ...p, events: [...p.events] });
  // The data schemas are shared with the routes' schemas (which Elysia compiles): they are
  // kept by reference and not frozen; the rest is a frozen copy.
  const events = p.events.map((e) => Object.freeze({ type: e.type, description: e.description, example: deepFreeze(structuredClone(e.example)), data: e.data }));
  return Object.freeze({ ...p, events: Object.freeze(events) as unknown as E });
}

export class EventCatalogue {
  private readonly byProduct = new Map<Product, Map<string, EventTypeInfo>>();
  private readonly products = new Map<Product, Omit<WebhookProduct, "events">>();

  /** Adds a product and its event types. Throws on a product added twice or a bad event type. */
  addProduct(p: { product: Product; label: string; legacyHeader: string; envelopeScopeField?: string; events: readonly EventTypeInfo[] }): void {
    if (this.products.has(p.product)) throw new Error(`duplicate webhook product: ${p.product}`);
    this.products.set(p.product, { product: p.product, label: p.label, legacyHeader: p.legacyHeader, envelopeScopeField: p.envelopeScopeField });
    try {
      this.register(p.product, [...p.events]);
    } catch (e) {
      this.products.delete(p.product);
      throw e;
    }
  }

  hasProduct(product: string): boolean {
    return this.products.has(product);
  }

  /** Every product added, in order. */
  productNames(): Product[] {
    return [...this.products.keys()];
  }

  label(product: Product): string {
    return this.products.get(product)?.label ?? product;
  }

  legacyHeader(product: Product): string | undefined {
    return this.products.get(product)?.legacyHeader;
  }

  envelopeScopeField(product: Product): string | undefined {
    return this.products.get(product)?.envelopeScopeField;
  }

  /** Adds event types to a product, in order. Throws on a duplicate, reserved or malformed type (nothing is added then). */
  register(product: Product, types: EventTypeInfo[]): void {
    if (!this.products.has(product)) throw new Error(`unknown product: ${product}`);
    const existing = this.byProduct.get(product) ?? new Map<string, EventTypeInfo>();
    const seen = new Set<string>();
    for (const t of types) {
      if (!TYPE_RE.test(t.type)) throw new Error(`malformed event type: ${JSON.stringify(t.type)}`);
      if (RESERVED_EVENT_TYPES.includes(t.type)) throw new Error(`reserved event type: ${t.type}`);
      if (existing.has(t.type) || seen.has(t.type)) throw new Error(`duplicate event type for ${product}: ${t.type}`);
      if (!t.description?.trim()) throw new Error(`event type ${t.type} needs a description`);
      if (!isPlainObject(t.example)) throw new Error(`event type ${t.type} needs an example object`);
      seen.add(t.type);
    }
    for (const t of types) {
      existing.set(t.type, deepFreeze({ type: t.type, description: t.description, example: structuredClone(t.example) }));
    }
    this.byProduct.set(product, existing);
  }

  /** Entries in registration order (frozen; safe to serialise directly). */
  list(product: Product): EventTypeInfo[] {
    return [...(this.byProduct.get(product)?.values() ?? [])];
  }

  has(product: Product, type: string): boolean {
    return this.byProduct.get(product)?.has(type) ?? false;
  }

  get(product: Product, type: string): EventTypeInfo | undefined {
    return this.byProduct.get(product)?.get(type);
  }

  types(product: Product): string[] {
    return [...(this.byProduct.get(product)?.keys() ?? [])];
  }

  /** Types of `requested` not in the product's catalogue (for 400s that name the valid set). */
  unknownTypes(product: Product, requested: readonly string[]): string[] {
    return requested.filter((t) => !this.has(product, t));
  }
}

// ---------------------------------------------------------------------------------------
// Conventions of every product's catalogue (services/<product>/events.ts). Each example is
// the `data` object of the envelope {id, type, created_at, data} (community envelopes also
// carry community_id). From the community spec, which names data.status, data.parent_id,
// data.auto_hidden, ...: `data` is the affected record itself, flat, plus a few
// event-specific fields (changes / changed_fields on updates, deleted_at on deletes,
// source_post_id, recipient_actor_ids, ...). Delete events carry the record's id.
// ---------------------------------------------------------------------------------------

/** `changes` of an update event: each changed field's value before and after. */
export const FieldChanges = Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() }), { description: "{field: {from, to}}" });
/** `changed_fields` of an update event: the names of the changed fields. */
export const ChangedFields = Type.Array(Type.String(), { description: "Names of the fields that changed" });
