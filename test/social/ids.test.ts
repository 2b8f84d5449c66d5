/**
 * Ids across the community API, one row per route that takes an id in its path, query or
 * body: each id of the row is sent malformed (400 VALIDATION_ERROR naming exactly that field,
 * before anything is looked up) and well-formed but unknown (404 NOT_FOUND, or what the route
 * answers for an id it does not know: 204 for the "204 always" deletes, 200 for filters and
 * lists of ids, 201 with a per-item error in a batch, 422 for an asset reference, 403 for a
 * signed URL that was never issued). The other ids of the row are real, so the answer is the
 * one id's. Also: the OpenAPI document types these ids as format uuid.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { communitySetup, createPost, type Social } from "../helpers/social";

let app: TestApp;
let s: Social;
/** Real ids by name: actors A and B, poll post P by A, comment C by B on P, group conversation G (A, B). */
const fx: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  s = await communitySetup(app);
  const [a, b] = [await s.actor(), await s.actor()];
  const p = await createPost(s, { actor_id: a.id, kind: "poll", body: "Which?", attributes: { poll: { question: "Which?", options: ["x", "y"] } } });
  const c = await s.call("POST", `/posts/${p.id}/comments`, { actor_id: b.id, body: "first" });
  const g = await s.call("POST", "/conversations", { actor_id: a.id, kind: "group", actor_ids: [b.id], name: "g" });
  if (c.status !== 201 || g.status !== 201) throw new Error(`fixtures: ${c.status} ${g.status}`);
  Object.assign(fx, { A: a.id, B: b.id, P: p.id, C: c.body.id, G: g.body.id, W: s.ws.id, CID: s.cid, X: crypto.randomUUID() });
});
afterAll(() => app.stop());

const MALFORMED = "not-a-uuid";
const UNKNOWN = "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b";

/** An id in a query or body: the name of its fixture (X is an id nothing has). */
const ID = Symbol("id");
type IdRef = { [ID]: string };
const id = (ref: string): IdRef => ({ [ID]: ref });
const isId = (v: unknown): v is IdRef => typeof v === "object" && v !== null && ID in v;

/** The fixture of each path parameter (community_id and workspace_id are the community's). */
const PATH_IDS: Record<string, string> = {
  community_id: "CID", workspace_id: "W", actor_id: "A", src_actor_id: "A", dst_actor_id: "B", owner_actor_id: "A", member_actor_id: "B",
  post_id: "P", comment_id: "C", conversation_id: "G", asset_id: "X", keyword_id: "X",
};

interface Row {
  m: string;
  /** Lane path (after /social/v1/communities/:community_id) or an absolute /social/... path; :name segments are ids. */
  p: string;
  q?: Record<string, unknown>;
  b?: unknown;
  /** Send the body as multipart (a file added). */
  form?: true;
  /** No credential: a signed URL. */
  anon?: true;
  /** The answer to a well-formed unknown id when not 404: one status, or per field. */
  unknown?: number | Record<string, number>;
  /** The field the 400 names when not the slot's own path (an item of a nullable list is named by the list). */
  names?: Record<string, string>;
}

interface Slot {
  field: string;
  at: "path" | "query" | "body";
}

const LANE = "/social/v1/communities/:community_id";
const fullPath = (r: Row) => (r.p.startsWith("/social/") ? r.p : `${LANE}${r.p}`);

function slotsOf(r: Row): Slot[] {
  const out: Slot[] = [...fullPath(r).matchAll(/:([a-z_]+)/g)].map((m) => ({ field: m[1]!, at: "path" as const }));
  for (const k of Object.keys(r.q ?? {})) if (isId(r.q![k])) out.push({ field: k, at: "query" });
  const walk = (v: unknown, at: string) => {
    if (isId(v)) return void out.push({ field: at, at: "body" });
    if (typeof v === "object" && v !== null) for (const [k, x] of Object.entries(v)) walk(x, at === "" ? k : `${at}.${k}`);
  };
  walk(r.b, "");
  return out;
}

/** The request of a row with one slot's value replaced. */
function request(r: Row, swap: Slot, value: string) {
  const pick = (slot: Slot, ref: string) => (slot.field === swap.field && slot.at === swap.at ? value : fx[ref]!);
  const path = fullPath(r).replace(/:([a-z_]+)/g, (_, name: string) => pick({ field: name, at: "path" }, PATH_IDS[name] ?? "X"));
  const query = Object.entries(r.q ?? {}).map(([k, v]) => `${k}=${encodeURIComponent(isId(v) ? pick({ field: k, at: "query" }, v[ID]) : String(v))}`);
  const fill = (v: unknown, at: string): unknown => {
    if (isId(v)) return pick({ field: at, at: "body" }, v[ID]);
    if (Array.isArray(v)) return v.map((x, i) => fill(x, `${at}.${i}`));
    if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, at === "" ? k : `${at}.${k}`)]));
    return v;
  };
  let body = r.b === undefined ? undefined : fill(r.b, "");
  if (r.form) {
    const form = new FormData();
    for (const [k, v] of Object.entries(body as Record<string, string>)) form.append(k, v);
    form.append("file", new Blob([new Uint8Array([1, 2, 3])]), "a.png");
    body = form;
  }
  return app.call(r.m, `${path}${query.length ? `?${query.join("&")}` : ""}`, { token: r.anon ? undefined : s.token, body });
}

const lanePost = (extra: Record<string, unknown> = {}) => ({ actor_id: id("A"), body: "hello", ...extra });

const ROWS: Row[] = [
  // Actors and counters (external_id is the customer's free-text key, not an id).
  { m: "POST", p: "/actors", b: { external_id: "someone" } },
  { m: "POST", p: "/actors/batch", b: { actors: [{ external_id: "someone" }] } },
  { m: "POST", p: "/actors/by-external/batch", b: { external_ids: ["someone"] } },
  { m: "GET", p: "/actors", q: { ids: id("A") }, unknown: { ids: 200 } },
  { m: "GET", p: "/actors/by-external/someone" },
  { m: "GET", p: "/actors/:actor_id" },
  { m: "PATCH", p: "/actors/:actor_id", b: { display_name: "n" } },
  { m: "DELETE", p: "/actors/:actor_id" },
  { m: "GET", p: "/counters", q: { actor_ids: id("A") }, unknown: { actor_ids: 200 } },
  { m: "GET", p: "/actors/:actor_id/counters" },
  // Follows and follow requests.
  { m: "POST", p: "/follows", b: { actor_id: id("A"), dst_actor_id: id("B") } },
  { m: "POST", p: "/follows/batch", b: { follows: [{ actor_id: id("A"), dst_actor_id: id("B") }] }, unknown: { "follows.0.actor_id": 201, "follows.0.dst_actor_id": 201 } },
  { m: "POST", p: "/follow-requests/:dst_actor_id/:src_actor_id/approve" },
  { m: "DELETE", p: "/follow-requests/:dst_actor_id/:src_actor_id", unknown: { dst_actor_id: 204, src_actor_id: 204 } },
  { m: "GET", p: "/actors/:actor_id/follow-requests" },
  { m: "DELETE", p: "/follows/:src_actor_id/:dst_actor_id", unknown: { src_actor_id: 204, dst_actor_id: 204 } },
  { m: "GET", p: "/actors/:actor_id/following" },
  { m: "GET", p: "/actors/:actor_id/followers" },
  // Mutes, blocks, restricts, close friends.
  ...["mutes", "blocks", "restricts"].flatMap((k): Row[] => [
    { m: "POST", p: `/${k}`, b: { src_actor_id: id("A"), dst_actor_id: id("B") } },
    { m: "DELETE", p: `/${k}/:src_actor_id/:dst_actor_id`, unknown: { src_actor_id: 204, dst_actor_id: 204 } },
    { m: "GET", p: `/actors/:actor_id/${k}` },
  ]),
  { m: "POST", p: "/close-friends", b: { owner_actor_id: id("A"), member_actor_id: id("B") } },
  { m: "DELETE", p: "/close-friends/:owner_actor_id/:member_actor_id", unknown: { owner_actor_id: 204, member_actor_id: 204 } },
  { m: "GET", p: "/actors/:actor_id/close-friends" },
  // Hashtags (a tag is a name, not an id).
  { m: "GET", p: "/hashtags/news" },
  { m: "GET", p: "/search/hashtags", q: { q: "n" } },
  { m: "GET", p: "/actors/:actor_id/hashtag-follows" },
  { m: "POST", p: "/actors/:actor_id/hashtag-follows", b: { tag: "news" } },
  { m: "DELETE", p: "/actors/:actor_id/hashtag-follows/news", unknown: { actor_id: 204 } },
  // Conversations.
  { m: "GET", p: "/conversations/unread-count", q: { actor_id: id("A") } },
  { m: "GET", p: "/conversations", q: { actor_id: id("A") } },
  { m: "POST", p: "/conversations", b: { actor_id: id("A"), recipient_actor_id: id("B") } },
  { m: "POST", p: "/conversations", b: { actor_id: id("A"), kind: "group", actor_ids: [id("B")] } },
  { m: "GET", p: "/conversations/:conversation_id" },
  { m: "POST", p: "/conversations/:conversation_id/messages", b: { actor_id: id("A"), body: "hi" } },
  { m: "POST", p: "/conversations/:conversation_id/messages", b: { actor_id: id("A"), body: "hi", assets: [{ asset_id: id("X") }] }, unknown: { "assets.0.asset_id": 422 } },
  { m: "GET", p: "/conversations/:conversation_id/messages" },
  { m: "POST", p: "/conversations/:conversation_id/read", b: { actor_id: id("A") } },
  { m: "POST", p: "/conversations/:conversation_id/participants", b: { actor_id: id("A"), actor_ids: [id("B")] } },
  { m: "PATCH", p: "/conversations/:conversation_id/participants/:actor_id", b: { muted: true } },
  { m: "DELETE", p: "/conversations/:conversation_id/participants/:actor_id" },
  // Posts and tags.
  { m: "POST", p: "/posts", b: lanePost() },
  { m: "POST", p: "/posts", b: lanePost({ kind: "quote", quote_post_id: id("P") }) },
  { m: "POST", p: "/posts", b: lanePost({ kind: "image", assets: [{ asset_id: id("X") }] }), unknown: { "assets.0.asset_id": 422 } },
  { m: "GET", p: "/posts", q: { author_id: id("A") } },
  { m: "GET", p: "/posts/:post_id", q: { actor_id: id("A") } },
  { m: "PATCH", p: "/posts/:post_id", b: { assets: [{ asset_id: id("X") }] }, unknown: { "assets.0.asset_id": 422 } },
  { m: "DELETE", p: "/posts/:post_id" },
  { m: "GET", p: "/posts/:post_id/tags" },
  { m: "POST", p: "/posts/:post_id/tags/:actor_id/approve" },
  { m: "POST", p: "/posts/:post_id/tags/:actor_id/decline" },
  // Comments.
  { m: "POST", p: "/posts/:post_id/comments", b: { actor_id: id("A"), body: "re", parent_id: id("C") } },
  { m: "POST", p: "/posts/:post_id/comments", b: { actor_id: id("A"), body: "re", assets: [{ asset_id: id("X") }] }, unknown: { "assets.0.asset_id": 422 } },
  { m: "GET", p: "/posts/:post_id/comments", q: { parent_id: id("C"), requester_id: id("A") } },
  { m: "GET", p: "/posts/:post_id/comments", q: { actor_id: id("A") } },
  { m: "GET", p: "/posts/:post_id/comments/:comment_id", q: { actor_id: id("A") } },
  { m: "PATCH", p: "/posts/:post_id/comments/:comment_id", b: { pinned: true, actor_id: id("A") } },
  { m: "DELETE", p: "/posts/:post_id/comments/:comment_id" },
  { m: "POST", p: "/posts/:post_id/comments/:comment_id/approve", b: { approver_actor_id: id("A") } },
  // Reactions, bookmarks, reposts, views, votes.
  { m: "POST", p: "/posts/:post_id/reactions", b: { actor_id: id("B"), type: "like" } },
  { m: "DELETE", p: "/posts/:post_id/reactions/:actor_id/like", unknown: { actor_id: 204 } },
  { m: "POST", p: "/posts/:post_id/comments/:comment_id/reactions", b: { actor_id: id("A"), type: "like" } },
  { m: "DELETE", p: "/posts/:post_id/comments/:comment_id/reactions/:actor_id/like", unknown: { actor_id: 204 } },
  { m: "POST", p: "/bookmarks", b: { actor_id: id("B"), post_id: id("P") } },
  { m: "DELETE", p: "/bookmarks/:actor_id/:post_id", unknown: { actor_id: 204, post_id: 204 } },
  { m: "GET", p: "/actors/:actor_id/bookmarks" },
  { m: "POST", p: "/posts/:post_id/reposts", b: { actor_id: id("B") } },
  { m: "DELETE", p: "/posts/:post_id/reposts/:actor_id", unknown: { actor_id: 204 } },
  { m: "GET", p: "/posts/:post_id/reposts" },
  { m: "POST", p: "/posts/:post_id/views", b: { viewer_actor_id: id("B") } },
  { m: "GET", p: "/posts/:post_id/viewers", q: { requester_id: id("A") } },
  { m: "POST", p: "/posts/:post_id/votes", b: { actor_id: id("B"), option_index: 0 } },
  { m: "GET", p: "/posts/:post_id/poll-results" },
  // Feeds, hides, notifications, flags.
  { m: "GET", p: "/actors/:actor_id/feeds/home" },
  { m: "GET", p: "/feeds/discover", q: { actor_id: id("A") } },
  { m: "POST", p: "/hides", b: { src_actor_id: id("B"), post_id: id("P") } },
  { m: "POST", p: "/hides", b: { actor_id: id("B"), dst_post_id: id("P") } },
  { m: "DELETE", p: "/hides/:src_actor_id/:post_id", unknown: { src_actor_id: 204, post_id: 204 } },
  { m: "GET", p: "/actors/:actor_id/hides" },
  { m: "GET", p: "/actors/:actor_id/notifications" },
  { m: "GET", p: "/actors/:actor_id/notifications/counts" },
  { m: "POST", p: "/actors/:actor_id/notifications/read", b: { ids: [id("X")] }, unknown: { "ids.0": 200 }, names: { "ids.0": "ids" } },
  { m: "POST", p: "/actors/:actor_id/notifications/seen", b: { ids: [id("X")] }, unknown: { "ids.0": 200 }, names: { "ids.0": "ids" } },
  { m: "POST", p: "/flags", b: { reporter_actor_id: id("B"), target_type: "post", target_id: id("P"), reason: "spam" } },
  // Assets: the signed routes answer 403 for a URL never issued (the signature is their credential).
  { m: "POST", p: "/assets", b: { actor_id: id("A") }, form: true },
  { m: "POST", p: "/assets/uploads", b: { actor_id: id("A") } },
  { m: "GET", p: "/assets/:asset_id" },
  { m: "PUT", p: "/assets/:asset_id/upload", q: { expires: "9999999999", sig: "00" }, b: "bytes", anon: true, unknown: 403 },
  { m: "GET", p: "/assets/:asset_id/renditions/thumb", q: { expires: "9999999999", sig: "00" }, anon: true, unknown: 403 },
  // Webhooks of the community: the spec-3 records and the shared routes of the same scope.
  { m: "GET", p: "/webhooks" },
  { m: "POST", p: "/webhooks", b: { url: "https://example.com/hook" } },
  { m: "GET", p: "/webhooks/endpoints" },
  { m: "GET", p: "/webhooks/events" },
  { m: "GET", p: "/social/v1/workspaces/:workspace_id/webhooks/endpoints" },
  { m: "GET", p: "/social/v1/workspaces/:workspace_id/webhooks/events" },
  // Admin lane.
  { m: "POST", p: "/social/v1/workspaces/:workspace_id/communities", b: { slug: "ids-app", display_name: "x", app_id: id("X") } },
  { m: "GET", p: "/social/v1/workspaces/:workspace_id/communities" },
  { m: "GET", p: "/social/v1/workspaces/:workspace_id/communities/:community_id" },
  { m: "PATCH", p: "/social/v1/workspaces/:workspace_id/communities/:community_id", b: { display_name: "x" } },
  { m: "DELETE", p: "/social/v1/workspaces/:workspace_id/communities/:community_id" },
  { m: "GET", p: "/social/v1/workspaces/:workspace_id/communities/:community_id/moderation/queue" },
  { m: "POST", p: "/social/v1/workspaces/:workspace_id/communities/:community_id/moderation/actions", b: { action: "hide", target_type: "post", target_id: id("P") } },
  { m: "POST", p: "/social/v1/workspaces/:workspace_id/communities/:community_id/moderation/actions", b: { action: "dismiss", flag_id: id("X") } },
  { m: "GET", p: "/social/v1/workspaces/:workspace_id/communities/:community_id/moderation/keywords" },
  { m: "POST", p: "/social/v1/workspaces/:workspace_id/communities/:community_id/moderation/keywords", b: { keyword: "k" } },
  { m: "DELETE", p: "/social/v1/workspaces/:workspace_id/communities/:community_id/moderation/keywords/:keyword_id", unknown: { keyword_id: 204 } },
];

const expectedUnknown = (r: Row, field: string) => (typeof r.unknown === "number" ? r.unknown : (r.unknown?.[field] ?? 404));
const label = (r: Row) => `${r.m} ${r.p}${r.q ? `?${Object.keys(r.q).join("&")}` : ""}${r.b && typeof r.b === "object" ? ` {${Object.keys(r.b).join(", ")}}` : ""}`;

describe("every id of every route: malformed 400 naming the field, well-formed unknown 404", () => {
  for (const r of ROWS) {
    test(label(r), async () => {
      for (const slot of slotsOf(r)) {
        const bad = await request(r, slot, MALFORMED);
        expect({ slot, status: bad.status, code: bad.body?.error?.code, fields: bad.body?.error?.details?.map((d: { field: string }) => d.field) }).toEqual({
          slot,
          status: 400,
          code: "VALIDATION_ERROR",
          fields: [r.names?.[slot.field] ?? slot.field],
        });
        const unknown = await request(r, slot, UNKNOWN);
        const want = expectedUnknown(r, slot.field);
        expect({ slot, status: unknown.status }).toEqual({ slot, status: want });
        if (want === 404) expect(unknown.body.error.code).toBe("NOT_FOUND");
      }
    });
  }

  test("a \"urn:uuid:\" form and a uuid without dashes are malformed too; case does not matter", async () => {
    for (const v of [`urn:uuid:${fx.A}`, fx.A!.replaceAll("-", ""), `${fx.A} `]) {
      const r = await s.call("GET", `/actors/${encodeURIComponent(v)}`);
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("actor_id");
    }
    expect((await s.call("GET", `/actors/${fx.A!.toUpperCase()}`)).body.id).toBe(fx.A);
    expect((await s.call("POST", "/follows", { actor_id: fx.A!.toUpperCase(), dst_actor_id: fx.B })).status).toBe(201);
  });

  test("comma-separated id lists name their parameter for any malformed item", async () => {
    for (const [path, field] of [
      [`/counters?actor_ids=${fx.A},${MALFORMED}`, "actor_ids"],
      [`/actors?ids=${fx.A},${MALFORMED}`, "ids"],
    ] as const) {
      const r = await s.call("GET", path);
      expect(r.status).toBe(400);
      expect(r.body.error.details).toEqual([{ field, reason: expect.stringContaining(MALFORMED) }]);
    }
    const known = await s.call("GET", `/counters?actor_ids=${fx.A},${UNKNOWN}`);
    expect(known.status).toBe(200);
    expect(known.body.missing).toEqual([UNKNOWN]);
  });
});

/**
 * Path parameters that are not UUIDs: the community's webhook records (whk_...) and their
 * deliveries (dlv_... or att_...), hashtags, reaction types, rendition names and external ids.
 * Each is sent outside its declared shape (400 VALIDATION_ERROR naming exactly it) and in shape
 * but naming nothing (404, or the route's documented answer).
 */
describe("named and prefixed path parameters: malformed 400 naming the parameter, well-formed unknown 404", () => {
  const hook: { id?: string } = {};
  beforeAll(async () => {
    const r = await s.call("POST", "/webhooks", { url: "https://example.com/ids-hook" });
    if (r.status !== 201) throw new Error(`webhook create: ${r.status} ${JSON.stringify(r.body)}`);
    hook.id = r.body.id;
  });
  const WHK = `whk_${"0".repeat(32)}`;
  const DLV = `dlv_${"0".repeat(32)}`;

  /** [method, lane path with {param} where the value goes, param, malformed, well-formed unknown, its answer, body, anonymous] */
  type Case = [string, (v: string) => string, string, string, string, number, unknown?, true?];
  const cases = (): Case[] => [
    ...(
      [
        ["GET", ""],
        ["PATCH", "", { disabled: false }],
        ["DELETE", ""],
        ["POST", "/rotate-secret"],
        ["GET", "/deliveries"],
        ["POST", "/test"],
        ["POST", `/deliveries/${DLV}/redeliver`],
      ] as [string, string, unknown?][]
    ).flatMap(([m, tail, body]): Case[] => [
      [m, (v) => `/webhooks/${v}${tail}`, "id", "whk_nope", WHK, 404, body],
      [m, (v) => `/webhooks/${v}${tail}`, "id", `ep_${"0".repeat(32)}`, WHK, 404, body],
    ]),
    ["POST", (v) => `/webhooks/${hook.id}/deliveries/${v}/redeliver`, "delivery_id", "dlv_nope", DLV, 404],
    ["POST", (v) => `/webhooks/${hook.id}/deliveries/${v}/redeliver`, "delivery_id", `evt_${"0".repeat(32)}`, `att_${"0".repeat(32)}`, 404],
    ["GET", (v) => `/hashtags/${v}`, "tag", "no-dash", "nothere", 404],
    ["GET", (v) => `/hashtags/${v}`, "tag", "two%20words", "%23NotHere", 404],
    ["DELETE", (v) => `/actors/${fx.A}/hashtag-follows/${v}`, "tag", "not-a-tag", "nevertagged", 204],
    ["DELETE", (v) => `/posts/${fx.P}/reactions/${fx.A}/${v}`, "type", "meh", "wow", 204],
    ["DELETE", (v) => `/posts/${fx.P}/comments/${fx.C}/reactions/${fx.A}/${v}`, "type", "LIKE", "wow", 204],
    ["GET", (v) => `/assets/${fx.X}/renditions/${v}?expires=9999999999&sig=00`, "name", "upload", "thumb", 403, undefined, true],
    ["GET", (v) => `/actors/by-external/${v}`, "external_id", "x".repeat(257), "x".repeat(256), 404],
  ];

  test("each parameter, each route", async () => {
    for (const [m, path, field, malformed, unknown, want, body, anon] of cases()) {
      const token = anon ? undefined : s.token;
      const bad = await app.call(m, `${s.base}${path(malformed)}`, { token, body });
      expect({ m, field, malformed, status: bad.status, code: bad.body?.error?.code, fields: bad.body?.error?.details?.map((d: { field: string }) => d.field) }).toEqual({
        m,
        field,
        malformed,
        status: 400,
        code: "VALIDATION_ERROR",
        fields: [field],
      });
      const ok = await app.call(m, `${s.base}${path(unknown)}`, { token, body });
      expect({ m, field, unknown, status: ok.status }).toEqual({ m, field, unknown, status: want });
    }
  });

  test("body fields of the same shapes: a tag, a reaction type (required), an external id", async () => {
    for (const [path, body, field] of [
      [`/actors/${fx.A}/hashtag-follows`, { tag: "bad tag" }, "tag"],
      [`/posts/${fx.P}/reactions`, { actor_id: fx.B, type: "meh" }, "type"],
      // Required, with no default: a reaction without a type is not a like.
      [`/posts/${fx.P}/reactions`, { actor_id: fx.B }, "type"],
      ["/actors", { external_id: "x".repeat(257) }, "external_id"],
      ["/actors", { external_id: "" }, "external_id"],
    ] as const) {
      const r = await s.call("POST", path, body);
      expect({ path, status: r.status, fields: r.body.error?.details?.map((d: { field: string }) => d.field) }).toEqual({ path, status: 400, fields: [field] });
    }
  });
});

describe("OpenAPI", () => {
  test("ids are documented as format uuid in paths, queries and bodies", async () => {
    const doc = (await app.call("GET", "/social/openapi.json")).body;
    const op = (path: string, method: string) => doc.paths[path][method];
    const param = (path: string, method: string, name: string) => op(path, method).parameters.find((x: any) => x.name === name).schema;
    expect(param("/social/v1/communities/{community_id}/posts/{post_id}/comments", "get", "post_id")).toMatchObject({ type: "string", format: "uuid" });
    expect(param("/social/v1/communities/{community_id}/posts/{post_id}/comments", "get", "requester_id")).toMatchObject({ type: "string", format: "uuid" });
    expect(param("/social/v1/workspaces/{workspace_id}/communities", "get", "workspace_id")).toMatchObject({ type: "string", format: "uuid" });
    const body = op("/social/v1/communities/{community_id}/posts/{post_id}/comments/{comment_id}/approve", "post").requestBody.content["application/json"].schema;
    const resolved = body.$ref ? doc.components.schemas[body.$ref.split("/").pop()] : body;
    expect(resolved.properties.approver_actor_id).toMatchObject({ type: "string", format: "uuid" });
  });

  test("the other path parameters declare their shape: prefixed ids by pattern, names by enum or pattern, external ids by length", async () => {
    const doc = (await app.call("GET", "/social/openapi.json")).body;
    const param = (path: string, method: string, name: string) => doc.paths[`/social/v1/communities/{community_id}${path}`][method].parameters.find((x: any) => x.name === name).schema;
    expect(param("/webhooks/{id}", "get", "id")).toMatchObject({ type: "string", pattern: "^whk_[0-9a-f]{32}$" });
    expect(param("/webhooks/{id}/deliveries/{delivery_id}/redeliver", "post", "delivery_id")).toMatchObject({ type: "string", pattern: "^(dlv|att)_[0-9a-f]{32}$" });
    const tag = "^#?[0-9A-Za-z_\\u0080-\\uffff]+$";
    expect(param("/hashtags/{tag}", "get", "tag")).toMatchObject({ type: "string", pattern: tag });
    expect(param("/actors/{actor_id}/hashtag-follows/{tag}", "delete", "tag")).toMatchObject({ type: "string", pattern: tag });
    expect(param("/posts/{post_id}/reactions/{actor_id}/{type}", "delete", "type").enum).toEqual(["like", "love", "haha", "wow", "sad", "angry", "celebrate", "insightful"]);
    expect(param("/assets/{asset_id}/renditions/{name}", "get", "name").enum).toEqual(["thumb", "small", "large", "webp"]);
    expect(param("/actors/by-external/{external_id}", "get", "external_id")).toMatchObject({ type: "string", minLength: 1, maxLength: 256 });
  });

  test("ids in responses are documented as format uuid", async () => {
    const doc = (await app.call("GET", "/social/openapi.json")).body;
    const resolve = (x: any): any => (x?.$ref ? resolve(doc.components.schemas[x.$ref.split("/").pop()]) : x);
    const ok = (path: string, method: string, status: string) => resolve(doc.paths[path][method].responses[status].content["application/json"].schema);
    const lane = "/social/v1/communities/{community_id}";
    const actor = ok(`${lane}/actors/{actor_id}`, "get", "200");
    expect(actor.properties.id).toMatchObject({ type: "string", format: "uuid" });
    expect(actor.properties.community_id).toMatchObject({ type: "string", format: "uuid" });
    const post = ok(`${lane}/posts/{post_id}`, "get", "200");
    for (const k of ["id", "actor_id"]) expect(post.properties[k]).toMatchObject({ format: "uuid" });
    expect(resolve(post.properties.mentions).items).toMatchObject({ format: "uuid" });
    const community = ok("/social/v1/workspaces/{workspace_id}/communities/{community_id}", "get", "200");
    expect(community.properties.workspace_id).toMatchObject({ format: "uuid" });
    expect(JSON.stringify(community.properties.app_id)).toContain('"format":"uuid"');
    expect(ok(`${lane}/webhooks/{id}`, "get", "200").properties.community_id).toMatchObject({ format: "uuid" });
  });
});
