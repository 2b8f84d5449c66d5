/**
 * Console journeys, community content, each at 1280 px and at 390 px (no horizontal scroll):
 * a post written from the page, seen in a follower's home feed and in discover, commented on
 * and replied to, a draft poll published; a post reported on an actor's behalf and hidden from
 * the moderation queue, then restored, and a keyword filter added and removed; an actor's
 * notifications read and marked read; an image uploaded, processed by the server's scheduler,
 * its renditions shown (served on the console's origin, so no CSP refusal), then deleted.
 * Every step is checked on the page and through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { journey, openConsole, SIGNED_OUT, unexpected, type ConsolePage } from "../helpers/browser";
import { createOperator, field, OPERATOR, startConsole, type ConsoleFixture } from "../helpers/console-app";

const T = 90_000;
let f: ConsoleFixture;
let token: string;
let ws: { id: string; slug: string };
beforeAll(async () => {
  f = await startConsole();
  token = await createOperator(f.app);
  ws = (await f.app.call("POST", "/platform/v1/workspaces", { token, body: { slug: "acme", display_name: "Acme" } })).body;
}, T);
afterAll(async () => void (await f?.stop()));

let seq = 0;
/** A community with three actors through the API; Alan follows Grace. */
async function community() {
  const n = ++seq;
  const c = (await f.app.call("POST", `/social/v1/workspaces/${ws.id}/communities`, { token, body: { slug: `club-${n}`, display_name: `Club ${n}` } })).body;
  const C = `/social/v1/communities/${c.id}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await f.app.call(method, `${C}${path}`, { token, body });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const actor = async (external_id: string, display_name: string) => (await call("POST", "/actors", { external_id, display_name })).actor as { id: string };
  const grace = await actor("grace", "Grace H.");
  const alan = await actor("alan", "Alan T.");
  const ada = await actor("ada", "Ada L.");
  await call("POST", "/follows", { actor_id: alan.id, dst_actor_id: grace.id });
  return { id: c.id as string, call, grace, alan, ada, admin: `/social/v1/workspaces/${ws.id}/communities/${c.id}` };
}

/** A page of `width`, signed in once for all the journeys at that width (sign-ins are rate-limited). */
async function signedIn(width: number): Promise<ConsolePage> {
  const cp = await openConsole(f.browser, f.base, { width, height: 860 });
  await cp.page.goto("/admin/");
  await cp.page.getByLabel("Email or username").fill(OPERATOR.username);
  await cp.page.getByLabel("Password").fill(OPERATOR.password);
  await cp.page.getByRole("button", { name: "Sign in" }).click();
  await cp.page.getByTestId("who").waitFor();
  return cp;
}

/** Opens a tab of the community by its address (a hash change: the session stays). */
const goTo = async (cp: ConsolePage, communityId: string, tab: string) => {
  await cp.page.evaluate((h) => void (location.hash = h), `#/w/acme/community/communities/${communityId}/${tab}`);
  await cp.page.getByRole("tab", { name: tab[0].toUpperCase() + tab.slice(1).split("/")[0], selected: true }).waitFor();
  await cp.page.getByText(communityId, { exact: true }).waitFor();
};

/** Nothing runs past the screen's width. */
async function fits(cp: ConsolePage, width: number) {
  expect(await cp.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
}

for (const width of [1280, 390]) {
  describe(`at ${width} px`, () => {
    let cp: ConsolePage;
    beforeAll(async () => void (cp = await signedIn(width)), T);
    afterAll(async () => void (await cp?.context.close()));
    test("posts: write one, a follower's home feed and discover show it, comment and reply, publish a draft poll", async () => {
      const s = await community();
      await goTo(cp, s.id, "posts");
      const { page } = cp;
      await journey(cp, `social-posts-${width}`, async () => {
        const write = page.getByRole("region", { name: "Write a post" });
        await write.getByLabel("Author").selectOption({ label: "Grace H. (grace)" });
        await write.getByLabel("Text", { exact: true }).fill("Morning run #running");
        await write.getByRole("button", { name: "Publish" }).click();
        const post = page.getByRole("region", { name: "Post by Grace H." });
        await post.getByText("Morning run #running").waitFor();
        await post.getByTestId("post").getByText("#running").waitFor();
        const listed = (await s.call("GET", "/posts")).data;
        expect(listed.map((p: any) => [p.body, p.actor_id])).toEqual([["Morning run #running", s.grace.id]]);
        const postId = listed[0].id as string;
        await fits(cp, width);
        await cp.shot(`community-post-${width}`);

        // Alan comments; Grace replies to him.
        await field(page, "Commenter").selectOption({ label: "Alan T. (alan)" });
        await field(page, "Comment").fill("Nice pace!");
        await page.getByRole("button", { name: "Comment", exact: true }).click();
        const comments = page.getByRole("table", { name: "Comments" });
        await comments.getByText("Nice pace!").waitFor();
        await post.getByText("1 comments", { exact: false }).waitFor();
        await comments.getByRole("button", { name: "Replies" }).click();
        await page.getByRole("table", { name: "Replies" }).getByText("No reply yet.").waitFor();
        await field(page, "Commenter").selectOption({ label: "Grace H. (grace)" });
        await field(page, "Comment").fill("Thanks Alan");
        await page.getByRole("button", { name: "Reply", exact: true }).click();
        await page.getByRole("table", { name: "Replies" }).getByText("Thanks Alan").waitFor();
        const top = (await s.call("GET", `/posts/${postId}/comments`)).data;
        expect(top.map((c: any) => [c.body, c.actor_id, c.depth])).toEqual([["Nice pace!", s.alan.id, 0]]);
        const replies = (await s.call("GET", `/posts/${postId}/comments?parent_id=${top[0].id}`)).data;
        expect(replies.map((c: any) => [c.body, c.actor_id, c.parent_id])).toEqual([["Thanks Alan", s.grace.id, top[0].id]]);
        // The reply deleted from the page.
        await page.getByRole("table", { name: "Replies" }).getByRole("button", { name: "Delete" }).click();
        await page.getByRole("table", { name: "Replies" }).getByRole("button", { name: "Confirm delete" }).click();
        await page.getByRole("table", { name: "Replies" }).getByText("No reply yet.").waitFor();
        expect((await f.app.call("GET", `/social/v1/communities/${s.id}/posts/${postId}/comments/${replies[0].id}`, { token })).status).toBe(404);
        await fits(cp, width);

        // Alan's home feed shows Grace's post (he follows her); discover shows it to anyone.
        await page.getByRole("tab", { name: "Feeds" }).click();
        await page.getByLabel("Feed of").selectOption({ label: "Alan T. (alan)" });
        await page.getByRole("table", { name: "Home feed" }).getByText("Morning run #running").waitFor();
        expect((await s.call("GET", `/actors/${s.alan.id}/feeds/home`)).data.map((p: any) => p.id)).toEqual([postId]);
        await page.getByRole("tab", { name: "Discover: hot" }).click();
        await page.getByRole("table", { name: "Discover: hot feed" }).getByText("Morning run #running").waitFor();
        // Ada follows no one: her home feed is empty.
        await page.getByLabel("Feed of").selectOption({ label: "Ada L. (ada)" });
        await page.getByRole("tab", { name: "Home" }).click();
        await page.getByRole("table", { name: "Home feed" }).getByText(/Nothing yet/).waitFor();
        await fits(cp, width);
        await cp.shot(`community-feed-${width}`);

        // A poll written as a draft: fields follow the kind; published from its page.
        await page.getByRole("tab", { name: "Posts" }).click();
        await page.getByRole("region", { name: "Write a post" }).getByLabel("Author").selectOption({ label: "Ada L. (ada)" });
        await field(page, "Kind").selectOption("poll");
        await field(page, "Poll question").fill("Best distance?");
        await field(page, "Poll options").fill("5k\n10k\nMarathon");
        await field(page, "Status").selectOption("draft");
        await page.getByRole("region", { name: "Write a post" }).getByRole("button", { name: "Publish" }).click();
        const poll = page.getByRole("region", { name: "Post by Ada L." });
        await poll.getByText("draft", { exact: true }).waitFor();
        await poll.getByLabel("Poll results").getByText("Marathon: 0").waitFor();
        await poll.getByRole("button", { name: "Publish now" }).click();
        await poll.getByText("published", { exact: true }).waitFor();
        const polls = (await s.call("GET", `/posts?author_id=${s.ada.id}`)).data;
        expect(polls.map((p: any) => [p.kind, p.status, p.attributes.poll.options])).toEqual([["poll", "published", ["5k", "10k", "Marathon"]]]);
        await fits(cp, width);
        expect(unexpected(cp.errors.splice(0), [SIGNED_OUT])).toEqual([]);
      });
    }, T);

    test("moderation: a post reported from the page is hidden from the queue and restored; keyword filters", async () => {
      const s = await community();
      const post = await s.call("POST", "/posts", { actor_id: s.grace.id, body: "Buy cheap watches" });
      await goTo(cp, s.id, `posts/${post.id}`);
      const { page } = cp;
      await journey(cp, `social-moderation-${width}`, async () => {
        await page.getByRole("region", { name: "Post by Grace H." }).getByText("Buy cheap watches").waitFor();
        const report = page.getByRole("region", { name: "Report this post" });
        await report.getByLabel("Reporter").selectOption({ label: "Ada L. (ada)" });
        await report.getByLabel("Reason").selectOption("spam");
        await report.getByLabel("Note").fill("ads");
        await report.getByRole("button", { name: "Report" }).click();
        await report.getByRole("status").getByText(/in the moderation queue/).waitFor();
        await fits(cp, width);

        await page.getByRole("tab", { name: "Moderation" }).click();
        const queue = page.getByRole("table", { name: "Moderation queue" });
        await queue.getByText("spam ×1").waitFor();
        await queue.getByText("Grace H.").waitFor();
        await fits(cp, width);
        await cp.shot(`community-moderation-${width}`);
        await queue.getByRole("button", { name: "Hide" }).click();
        await queue.getByText("No open flags.").waitFor();
        expect((await f.app.call("GET", `${s.admin}/moderation/queue`, { token })).body.data).toEqual([]);
        expect((await s.call("GET", `/posts/${post.id}`)).moderation).toBe("hidden");

        // The post's page says so, and restores it.
        await goTo(cp, s.id, `posts/${post.id}`);
        const region = page.getByRole("region", { name: "Post by Grace H." });
        await region.getByTestId("post").getByText("hidden", { exact: true }).waitFor();
        await region.getByRole("button", { name: "Restore" }).click();
        await region.getByTestId("post").getByText("none", { exact: true }).waitFor();
        expect((await s.call("GET", `/posts/${post.id}`)).moderation).toBe(null);

        // Keyword filters: added (held for review), listed, removed.
        await page.getByRole("tab", { name: "Moderation" }).click();
        await field(page, "Keyword").fill("Casino");
        await field(page, "When found").selectOption("hold");
        await page.getByRole("button", { name: "Add filter" }).click();
        const filters = page.getByRole("table", { name: "Keyword filters" });
        await filters.getByText("casino", { exact: true }).waitFor();
        expect((await f.app.call("GET", `${s.admin}/moderation/keywords`, { token })).body.data.map((k: any) => [k.keyword, k.action])).toEqual([["casino", "hold"]]);
        await filters.getByRole("button", { name: "Remove" }).click();
        await filters.getByRole("button", { name: "Confirm remove" }).click();
        await filters.getByText("No keyword filter.").waitFor();
        expect((await f.app.call("GET", `${s.admin}/moderation/keywords`, { token })).body.data).toEqual([]);
        await fits(cp, width);
        expect(unexpected(cp.errors.splice(0), [SIGNED_OUT])).toEqual([]);
      });
    }, T);

    test("notifications: an actor's follow and comment notifications, counts, marked read", async () => {
      const s = await community();
      const post = await s.call("POST", "/posts", { actor_id: s.grace.id, body: "Trail day" });
      await s.call("POST", `/posts/${post.id}/comments`, { actor_id: s.ada.id, body: "Which trail?" });
      await goTo(cp, s.id, "notifications");
      const { page } = cp;
      await journey(cp, `social-notifications-${width}`, async () => {
        await page.getByLabel("Notifications of").selectOption({ label: "Grace H. (grace)" });
        const list = page.getByRole("table", { name: "Notifications" });
        await list.getByText("comment", { exact: true }).waitFor();
        await list.getByText("follow", { exact: true }).waitFor();
        await list.locator("tr", { hasText: "comment" }).getByText("Ada L.").waitFor();
        const counts = page.getByTestId("notification-counts");
        await counts.getByText("2", { exact: true }).first().waitFor();
        await fits(cp, width);
        await cp.shot(`community-notifications-${width}`);
        // One marked read, then all.
        await list.locator("tr", { hasText: "Alan T." }).getByRole("button", { name: "Mark read" }).click();
        await list.locator("tr", { hasText: "Alan T." }).getByText("read", { exact: true }).waitFor();
        expect((await s.call("GET", `/actors/${s.grace.id}/notifications/counts`)).unread_count).toBe(1);
        await page.getByRole("button", { name: "Mark all read" }).click();
        await list.getByRole("button", { name: "Mark read" }).waitFor({ state: "detached" });
        expect(await s.call("GET", `/actors/${s.grace.id}/notifications/counts`)).toEqual({ unread_count: 0, unseen_count: 0 });
        await counts.getByText(/^0$/).first().waitFor();
        // The comment notification links to its post.
        await list.locator("tr", { hasText: "comment" }).getByRole("link", { name: "post" }).click();
        await page.getByRole("region", { name: "Post by Grace H." }).getByText("Trail day").waitFor();
        expect(unexpected(cp.errors.splice(0), [SIGNED_OUT])).toEqual([]);
      });
    }, T);

    test("assets: an image uploaded as an actor, processed, its renditions shown, then deleted", async () => {
      const s = await community();
      const png = await sharp({ create: { width: 900, height: 600, channels: 3, background: "#2a7ae2" } }).png().toBuffer();
      await goTo(cp, s.id, "assets");
      const { page } = cp;
      await journey(cp, `social-assets-${width}`, async () => {
        await page.getByRole("table", { name: "Assets" }).getByText("No asset yet.").waitFor();
        await page.getByLabel("Owner").selectOption({ label: "Grace H. (grace)" });
        await field(page, "Image").setInputFiles({ name: "track.png", mimeType: "image/png", buffer: png });
        await page.getByRole("button", { name: "Upload" }).click();
        // The server's scheduler processes it; the open asset is read again until it is ready.
        const detail = page.getByTestId("asset");
        await detail.getByText("ready", { exact: true }).waitFor({ timeout: 30_000 });
        const renditions = page.getByLabel("Renditions");
        await renditions.getByText("thumb: 200×133, png").waitFor();
        await renditions.getByText("webp: 900×600, webp").waitFor();
        const thumb = renditions.getByRole("img", { name: "thumb rendition" });
        await page.waitForFunction(() => [...document.querySelectorAll("figure img")].every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));
        expect(await thumb.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBe(200);
        const list = (await s.call("GET", "/assets")).data;
        expect(list.map((a: any) => [a.owner_actor_id, a.status, a.width, a.height])).toEqual([[s.grace.id, "ready", 900, 600]]);
        await page.getByRole("table", { name: "Assets" }).getByText("900×600", { exact: false }).waitFor();
        await fits(cp, width);
        await cp.shot(`community-assets-${width}`);
        await page.getByRole("button", { name: "Delete asset" }).click();
        await page.getByRole("button", { name: "Confirm delete asset" }).click();
        await page.getByRole("table", { name: "Assets" }).getByText("No asset yet.").waitFor();
        expect((await f.app.call("GET", `/social/v1/communities/${s.id}/assets/${list[0].id}`, { token })).status).toBe(404);
        // No file chosen: said under the form, no request.
        await page.getByRole("button", { name: "Upload" }).click();
        await page.locator("#upload-asset").getByRole("alert").getByText("Choose an image file first").waitFor();
        expect(unexpected(cp.errors.splice(0), [SIGNED_OUT])).toEqual([]);
      });
    }, T);
  });
}
