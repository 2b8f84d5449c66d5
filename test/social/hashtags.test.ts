/**
 * Hashtags over HTTP: tag normalisation, the directory (fed here through useHashtags, the
 * store function posts will call), prefix search, hashtag follows (idempotent, refresh,
 * newest first, 204-always unfollow of a well-formed tag), actions.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useHashtags } from "../../src/services/social/hashtags/store";
import { extractTags, normalizeTag } from "../../src/services/social/hashtags/tags";
import { startTestApp, type TestApp } from "../helpers/app";
import { inProcess, ON_BINARY } from "../helpers/target";
import { allPages, communitySetup, keyWith } from "../helpers/social";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

describe("normalisation", () => {
  test("lowercase, leading # dropped, NFC, Unicode letters/digits/underscore, 1-64", () => {
    expect(normalizeTag("#MeetUp")).toBe("meetup");
    expect(normalizeTag("Café_2026")).toBe("café_2026");
    expect(normalizeTag("Cafe\u0301")).toBe("café");
    expect(normalizeTag("東京")).toBe("東京");
    expect(normalizeTag("a".repeat(64))).toBe("a".repeat(64));
    for (const bad of ["", "#", "a".repeat(65), "two words", "dash-ed", "##x", "emoji🎉"]) expect(normalizeTag(bad)).toBeNull();
    expect(extractTags("Meetup #Friday and #friday, #Café! not#this #a-b")).toEqual(["friday", "café", "a"]);
  });
});

describe("directory", () => {
  inProcess("feeds the directory through the store (useHashtags on app.ctx.db) at chosen injected-clock times")("GET /hashtags/{tag} normalises; 404 unknown; 400 INVALID_TAG; search is a lowercase prefix (1-32), alphabetical", async () => {
    const s = await communitySetup(app);
    await useHashtags(app.ctx.db, s.cid, ["meetup", "meet", "mead", "zebra"], app.clock.iso());
    app.clock.advance(1000);
    await useHashtags(app.ctx.db, s.cid, ["meetup"], app.clock.iso());
    const r = await s.call("GET", "/hashtags/%23MeetUp");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ community_id: s.cid, tag: "meetup", first_used_at: new Date(app.clock.nowMs() - 1000).toISOString(), post_count: 2 });
    expect((await s.call("GET", "/hashtags/unknown")).status).toBe(404);
    // What cannot be a tag is 400 naming it: the route's pattern refuses ASCII punctuation, the
    // normalisation what a pattern cannot tell (non-ASCII characters that are not letters, over 64).
    for (const [raw, code] of [["no-dash", "VALIDATION_ERROR"], [encodeURIComponent("emoji🎉"), "INVALID_TAG"], ["a".repeat(65), "INVALID_TAG"]]) {
      const bad = await s.call("GET", `/hashtags/${raw}`);
      expect({ raw, status: bad.status, code: bad.body.error.code, fields: bad.body.error.details.map((d: { field: string }) => d.field) }).toEqual({ raw, status: 400, code, fields: ["tag"] });
    }
    expect((await s.call("GET", `/hashtags/${encodeURIComponent("東京")}`)).status).toBe(404);
    expect((await s.call("GET", "/search/hashtags?q=me")).body.data.map((h: any) => h.tag)).toEqual(["mead", "meet", "meetup"]);
    expect((await s.call("GET", "/search/hashtags?q=ME&limit=1")).body.data.map((h: any) => h.tag)).toEqual(["mead"]);
    expect((await s.call("GET", "/search/hashtags?q=%23mee")).body.data.map((h: any) => h.tag)).toEqual(["meet", "meetup"]);
    expect((await s.call("GET", "/search/hashtags?q=q_")).body.data).toEqual([]);
    expect((await s.call("GET", `/search/hashtags?q=${"m".repeat(32)}`)).status).toBe(200);
    expect((await s.call("GET", `/search/hashtags?q=${"m".repeat(33)}`)).status).toBe(400);
    expect((await s.call("GET", "/search/hashtags?q=")).status).toBe(400);
    expect((await s.call("GET", "/search/hashtags")).status).toBe(400);
    // Another community's directory is separate.
    const other = await communitySetup(app);
    expect((await other.call("GET", "/hashtags/meetup")).status).toBe(404);
  });
});

describe("hashtag follows", () => {
  inProcess("feeds the directory through app.ctx.db and compares followed_at with the injected clock as it moves")("201 follow (tag must exist), idempotent with followed_at refreshed, newest first, 204 always unfollow (400 for what cannot be a tag)", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    await useHashtags(app.ctx.db, s.cid, ["books", "cats"], app.clock.iso());
    const r = await s.call("POST", `/actors/${a.id}/hashtag-follows`, { tag: "#Books" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ actor_id: a.id, community_id: s.cid, tag: "books", followed_at: app.clock.iso() });
    app.clock.advance(1000);
    await s.call("POST", `/actors/${a.id}/hashtag-follows`, { tag: "cats" });
    expect((await allPages(s, `/actors/${a.id}/hashtag-follows`, 1)).map((f) => f.tag)).toEqual(["cats", "books"]);
    app.clock.advance(1000);
    const again = await s.call("POST", `/actors/${a.id}/hashtag-follows`, { tag: "books" });
    expect(again.status).toBe(201);
    expect(again.body.followed_at).toBe(app.clock.iso());
    expect((await allPages(s, `/actors/${a.id}/hashtag-follows`, 1)).map((f) => f.tag)).toEqual(["books", "cats"]);
    expect((await s.call("POST", `/actors/${a.id}/hashtag-follows`, { tag: "nothere" })).status).toBe(404);
    expect((await s.call("POST", `/actors/${a.id}/hashtag-follows`, { tag: "bad tag" })).status).toBe(400);
    expect((await s.call("POST", `/actors/0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b/hashtag-follows`, { tag: "books" })).status).toBe(404);
    expect((await s.call("DELETE", `/actors/${a.id}/hashtag-follows/%23BOOKS`)).status).toBe(204);
    expect((await s.call("DELETE", `/actors/${a.id}/hashtag-follows/books`)).status).toBe(204);
    expect((await s.call("DELETE", `/actors/${a.id}/hashtag-follows/nevertagged`)).status).toBe(204);
    expect((await s.call("DELETE", `/actors/${a.id}/hashtag-follows/not-a-tag`)).status).toBe(400);
    expect((await s.call("DELETE", `/actors/${a.id}/hashtag-follows/${encodeURIComponent("emoji🎉")}`)).status).toBe(400);
    expect((await s.call("GET", `/actors/${a.id}/hashtag-follows`)).body.data.map((f: any) => f.tag)).toEqual(["cats"]);
    const reader = await keyWith(app, s, ["social.read", "social.list"]);
    expect((await app.call("POST", `${s.base}/actors/${a.id}/hashtag-follows`, { token: reader, body: { tag: "cats" } })).status).toBe(403);
    expect((await app.call("GET", `${s.base}/actors/${a.id}/hashtag-follows`, { token: reader })).status).toBe(200);
  });
});
