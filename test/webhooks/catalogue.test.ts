import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { SERVICE_MODULES } from "../../src/app";
import { EventCatalogue, defineWebhookProduct, type WebhookProduct } from "../../src/kernel/webhooks/catalogue";
import type { Product } from "../../src/kernel/webhooks/types";

/** Every service module's webhook product (each product defines its list in its own folder). */
const PRODUCT_DEFS = SERVICE_MODULES.flatMap((m) => (m.webhooks ? [m.webhooks] : []));
const PRODUCTS = Object.fromEntries(PRODUCT_DEFS.map((p) => [p.product, p]));
const registerBuiltinEventTypes = (c: EventCatalogue) => {
  for (const p of PRODUCT_DEFS) c.addProduct(p);
};
/** A catalogue that knows the products but none of their event types. */
const bare = (...products: string[]) => {
  const c = new EventCatalogue();
  for (const product of products) c.addProduct({ product, label: product, legacyHeader: `x-${product}-signature`, events: [] });
  return c;
};

const SOCIAL_21 = [
  "post.created", "post.updated", "post.deleted", "post.reaction.created", "repost.created",
  "comment.created", "comment.updated", "comment.deleted", "comment.reaction.created",
  "edge.follow.created", "edge.follow.deleted", "edge.follow.requested", "edge.follow.request_approved",
  "flag.created", "flag.updated", "moderation.action.applied", "actor.updated", "dm.message.created",
  "tag.created", "asset.ready", "asset.failed",
];

const EXPECTED: Record<Product, string[]> = {
  tack: [
    "card.created", "card.updated", "card.moved", "card.completed", "card.reopened", "card.archived", "comment.created",
    "list.created", "list.updated", "list.deleted", "project.created", "project.archived",
  ],
  waitlist: ["entry.created", "entry.updated", "entry.approved", "entry.rejected", "entry.invited", "entry.invite_failed", "entry.deleted", "waitlist.status_changed"],
  social: SOCIAL_21,
  mail: [
    "email.sent", "email.delivered", "email.delivery_delayed", "email.bounced", "email.complained", "email.failed",
    "email.received", "suppression.created", "suppression.deleted", "domain.created", "domain.updated", "domain.deleted",
  ],
  trawl: ["job.queued", "job.running", "job.succeeded", "job.failed", "job.cancelled", "credits.low"],
  auth: [
    "user.created", "user.signed_in", "user.email_verified", "user.updated", "user.deleted", "role.assigned",
    "role.removed", "tenant.created", "tenant.updated", "tenant.deleted", "tenant.member.added", "tenant.member.removed",
  ],
};

function builtin() {
  const c = new EventCatalogue();
  registerBuiltinEventTypes(c);
  return c;
}

describe("built-in catalogue", () => {
  test("every product has exactly the expected types, in order", () => {
    const c = builtin();
    for (const product of Object.keys(EXPECTED)) {
      expect(c.types(product)).toEqual(EXPECTED[product]);
      expect(c.list(product).map((e) => e.type)).toEqual(EXPECTED[product]);
    }
  });

  test("counts per product (community: exactly 21)", () => {
    const c = builtin();
    const counts = Object.fromEntries(Object.keys(EXPECTED).map((p) => [p, c.types(p).length]));
    // Each product's count follows its list above (one line per product, so services that
    // add events touch only their own line); the community's is pinned by the spec.
    expect(counts).toEqual(Object.fromEntries(Object.entries(EXPECTED).map(([p, l]) => [p, l.length])));
    expect(counts.social).toBe(21);
  });

  test("no duplicates; ping is never in a catalogue", () => {
    const c = builtin();
    for (const p of Object.keys(PRODUCTS) as Product[]) {
      const t = c.types(p);
      expect(new Set(t).size).toBe(t.length);
      expect(c.has(p, "ping")).toBe(false);
    }
  });

  test("every entry has a one-line description and an object example that survives JSON", () => {
    const c = builtin();
    for (const p of Object.keys(PRODUCTS) as Product[]) {
      for (const e of c.list(p)) {
        expect(e.description.trim().length).toBeGreaterThan(5);
        expect(e.description).not.toContain("\n");
        expect(typeof e.example).toBe("object");
        expect(e.example).not.toBeNull();
        expect(Array.isArray(e.example)).toBe(false);
        expect(Object.keys(e.example).length).toBeGreaterThan(0);
        expect(JSON.parse(JSON.stringify(e.example))).toEqual(e.example);
      }
    }
  });

  test("community examples carry the fields the spec names on data", () => {
    const c = builtin();
    const ex = (t: string) => c.get("social", t)!.example;
    expect(ex("post.created")).toHaveProperty("status");
    expect(ex("repost.created")).toHaveProperty("source_post_id");
    expect(ex("comment.created")).toHaveProperty("parent_id", null);
    expect(ex("flag.created")).toHaveProperty("auto_hidden");
    expect(ex("dm.message.created")).toHaveProperty("recipient_actor_ids");
    expect(ex("tag.created")).toHaveProperty("tagged_actor_id");
    expect(ex("asset.failed")).toHaveProperty("failure_reason");
    expect(["hide", "remove", "restore", "warn", "ban", "dismiss"]).toContain(ex("moderation.action.applied").action as string);
  });

  test("has / get / types / unknownTypes", () => {
    const c = builtin();
    expect(c.has("tack", "card.moved")).toBe(true);
    expect(c.has("tack", "comment.created")).toBe(true);
    expect(c.has("social", "comment.created")).toBe(true);
    expect(c.has("mail", "card.moved")).toBe(false);
    expect(c.has("social", "post.nope")).toBe(false);
    expect(c.get("trawl", "job.succeeded")?.example).toHaveProperty("status", "succeeded");
    expect(c.get("trawl", "job.nope")).toBeUndefined();
    expect(c.unknownTypes("waitlist", ["entry.created", "entry.bogus", "ping"])).toEqual(["entry.bogus", "ping"]);
  });

  test("entries are immutable; callers cannot corrupt the catalogue", () => {
    const c = builtin();
    const list = c.list("waitlist");
    list.pop();
    expect(c.types("waitlist").length).toBe(EXPECTED.waitlist.length);
    expect(() => {
      (c.list("waitlist")[0]!.example as Record<string, unknown>).email = "x";
    }).toThrow();
    expect(Object.isFrozen(PRODUCTS.social!.events)).toBe(true);
    expect(Object.isFrozen(PRODUCTS.social!.events[0]!.example)).toBe(true);
  });
});

describe("EventCatalogue.register", () => {
  const info = (type: string) => ({ type, description: "Something happened.", example: { id: "x" } });

  test("instances are independent (no module-level state)", () => {
    const a = bare("mail");
    const b = bare("mail");
    a.register("mail", [info("message.sent")]);
    expect(a.types("mail")).toEqual(["message.sent"]);
    expect(b.types("mail")).toEqual([]);
    expect(b.list("mail")).toEqual([]);
    // builtins can be registered into two catalogues
    registerBuiltinEventTypes(new EventCatalogue());
    expect(builtin().types("social").length).toBe(21);
  });

  test("registering in several calls appends", () => {
    const c = bare("trawl");
    c.register("trawl", [info("job.queued")]);
    c.register("trawl", [info("credits.low")]);
    expect(c.types("trawl")).toEqual(["job.queued", "credits.low"]);
  });

  test("a duplicate type throws (across calls and within one call) and adds nothing", () => {
    const c = bare("tack", "social");
    c.register("tack", [info("card.created")]);
    expect(() => c.register("tack", [info("card.moved"), info("card.created")])).toThrow(/duplicate/);
    expect(() => c.register("tack", [info("card.moved"), info("card.moved")])).toThrow(/duplicate/);
    expect(c.types("tack")).toEqual(["card.created"]);
    // the same name under another product is fine
    c.register("social", [info("card.created")]);
    expect(c.has("social", "card.created")).toBe(true);
    // a product added twice is a duplicate
    const d = builtin();
    expect(() => registerBuiltinEventTypes(d)).toThrow(/duplicate/);
    expect(() => d.register("tack", [info("card.created")])).toThrow(/duplicate/);
  });

  test("reserved, malformed or incomplete entries are refused", () => {
    const c = bare("social");
    expect(() => c.register("social", [info("ping")])).toThrow();
    expect(() => c.register("social", [info("Post.Created")])).toThrow();
    expect(() => c.register("social", [info("post")])).toThrow();
    expect(() => c.register("social", [{ type: "post.created", description: " ", example: {} }])).toThrow();
    expect(() => c.register("social", [{ type: "post.created", description: "x", example: [] as unknown as Record<string, unknown> }])).toThrow();
    expect(() => c.register("nope" as Product, [info("a.b")])).toThrow(/unknown product/);
    expect(c.types("social")).toEqual([]);
  });
});

describe("defineWebhookProduct (what a product module exports)", () => {
  const info = (type: string) => ({ type, description: "Something happened.", data: Type.Object({ id: Type.String() }), example: { id: "x" } });
  const def = (over: Partial<WebhookProduct> = {}): WebhookProduct => ({ product: "demo", label: "Demo", legacyHeader: "x-demo-signature", events: [info("thing.created")], ...over });

  test("checks the product like the catalogue will, and freezes a copy", () => {
    const events = [info("thing.created")];
    const p = defineWebhookProduct(def({ events }));
    events[0]!.description = "changed";
    expect(p.events[0]!.description).toBe("Something happened.");
    expect(Object.isFrozen(p.events[0]!.example)).toBe(true);
    expect(() => defineWebhookProduct(def({ events: [info("thing.created"), info("thing.created")] }))).toThrow(/duplicate/);
    expect(() => defineWebhookProduct(def({ events: [info("Thing.Created")] }))).toThrow(/malformed event type/);
    expect(() => defineWebhookProduct(def({ product: "Demo" }))).toThrow(/product name/);
    expect(() => defineWebhookProduct(def({ legacyHeader: "X Demo" }))).toThrow(/legacy header/);
  });

  test("a catalogue refuses the same product twice and keeps what it knows of each", () => {
    const c = new EventCatalogue();
    c.addProduct(defineWebhookProduct(def({ envelopeScopeField: "demo_id" })));
    expect(() => c.addProduct(defineWebhookProduct(def()))).toThrow(/duplicate webhook product/);
    expect(c.productNames()).toEqual(["demo"]);
    expect([c.label("demo"), c.legacyHeader("demo"), c.envelopeScopeField("demo")]).toEqual(["Demo", "x-demo-signature", "demo_id"]);
    expect(c.hasProduct("nope")).toBe(false);
  });
});

describe("public event-type list", () => {
  test("GET /social/v1/webhook-event-types needs no credential and lists the 21 community types", async () => {
    const { startTestApp } = await import("../helpers/app");
    const app = await startTestApp();
    const r = await app.call("GET", "/social/v1/webhook-event-types");
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(21);
    expect(r.body.data).toContain("post.created");
    expect(r.body.data).toContain("asset.failed");
    expect(r.body.data).not.toContain("ping");
    await app.stop();
  });
});
