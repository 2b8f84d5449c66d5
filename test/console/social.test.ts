/**
 * Console journey, community: a community created from the page, actors written through the
 * API, one looked up by external id and by id with its counters (a follow moves them),
 * suspended from the page (the API then holds it), the community's settings saved.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { journey, SIGNED_OUT, unexpected } from "../helpers/browser";
import { field, operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";

const T = 60_000;
let f: ConsoleFixture;
beforeAll(async () => void (f = await startConsole()), T);
afterAll(async () => void (await f?.stop()));

test("console: community, actor lookup, counters, suspension", async () => {
  const { cp, page, token, ws } = await operatorInWorkspace(f);
  await journey(cp, "social", async () => {
    await screen(page, "Community", "Communities");
    await field(page, "Display name").fill("Runners");
    await field(page, "Slug").fill("runners");
    await page.getByRole("button", { name: "Create community" }).click();
    await page.getByRole("region", { name: "Runners" }).getByText("active", { exact: true }).waitFor();
    const community = (await f.app.call("GET", `/social/v1/workspaces/${ws.id}/communities`, { token })).body.data[0];
    expect(community.slug).toBe("runners");

    // The customer's backend writes actors and a follow (through the API).
    const C = `/social/v1/communities/${community.id}`;
    const grace = (await f.app.call("POST", `${C}/actors`, { token, body: { external_id: "user_1042", display_name: "Grace H.", metadata: { plan: "pro" } } })).body.actor;
    const alan = (await f.app.call("POST", `${C}/actors`, { token, body: { external_id: "user_7", display_name: "Alan T." } })).body.actor;
    expect((await f.app.call("POST", `${C}/follows`, { token, body: { actor_id: alan.id, dst_actor_id: grace.id } })).status).toBe(201);

    // Lookup by external id: the actor with its counters.
    await field(page, "Id").fill("user_1042");
    await page.getByRole("button", { name: "Look up" }).click();
    const card = page.getByRole("region", { name: "Actor Grace H." });
    await card.getByTestId("actor").getByText(grace.id).waitFor();
    const counters = card.getByTestId("counters");
    await counters.locator("dt:has-text('Followers') + dd").getByText("1", { exact: true }).waitFor();
    await page.getByRole("table", { name: "Actors" }).getByText("user_7").waitFor();
    await cp.shot("community-actor");

    // Lookup by id (Alan follows one), then suspend him from the page.
    await field(page, "By").selectOption("id");
    await field(page, "Id").fill(alan.id);
    await page.getByRole("button", { name: "Look up" }).click();
    const alanCard = page.getByRole("region", { name: "Actor Alan T." });
    await alanCard.getByTestId("counters").locator("dt:has-text('Following') + dd").getByText("1", { exact: true }).waitFor();
    await alanCard.getByRole("button", { name: "Suspend actor" }).click();
    await alanCard.getByText("suspended", { exact: true }).waitFor();
    expect((await f.app.call("GET", `${C}/actors/${alan.id}`, { token })).body.status).toBe("suspended");
    await page.getByRole("table", { name: "Actors" }).locator("tr", { hasText: "user_7" }).getByText("suspended").waitFor();

    // An unknown external id: the API's 404 shown under the form.
    await field(page, "By").selectOption("external");
    await field(page, "Id").fill("nobody");
    await page.getByRole("button", { name: "Look up" }).click();
    await page.locator("#actor-lookup").getByRole("alert").waitFor();

    // Moderation: Grace flags Alan (through the API); the queue lists him, Dismiss closes the flag.
    expect((await f.app.call("POST", `${C}/flags`, { token, body: { reporter_actor_id: grace.id, target_type: "actor", target_id: alan.id, reason: "spam" } })).status).toBe(201);
    await page.getByRole("tab", { name: "Moderation" }).click();
    const queue = page.getByRole("table", { name: "Moderation queue" });
    await queue.getByText(alan.id).first().waitFor();
    await queue.getByText("spam ×1").waitFor();
    await queue.getByRole("button", { name: "Dismiss" }).click();
    await queue.getByText("No open flags.").waitFor();
    expect((await f.app.call("GET", `/social/v1/workspaces/${ws.id}/communities/${community.id}/moderation/queue`, { token })).body.data).toEqual([]);

    // Settings: a setting changed through PATCH.
    await page.getByRole("tab", { name: "Settings" }).click();
    await field(page, "max group conversation size").fill("20");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    expect((await f.app.call("GET", `/social/v1/workspaces/${ws.id}/communities/${community.id}`, { token })).body.settings.max_group_conversation_size).toBe(20);
    await cp.shot("community-settings");

    // Webhooks of the community's own scope: the community is picked, its event types listed.
    await screen(page, "Webhooks", "Endpoints");
    await page.getByLabel("Scope").selectOption("social-community");
    await page.getByLabel("Community").locator("option", { hasText: "Runners" }).waitFor({ state: "attached" });
    await page.getByText(/Known: .*actor\.updated/).waitFor();

    expect(unexpected(cp.errors, [SIGNED_OUT, /status of 404 .*\/actors\/by-external\/nobody$/])).toEqual([]);
  });
}, T);
