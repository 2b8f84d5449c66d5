/**
 * Console journeys, card board. The board's API takes only API keys: the console mints one
 * tack.* key per session on the first visit, reuses it on every later visit and reload, and
 * revokes it on sign-out. A board workspace and a project with three lists from the page, a
 * card added, dragged to another list (the move API: the API then holds it there), moved on
 * with the keyboard fallback, and its detail with a comment and the activity of its moves.
 * Labels created, renamed, recoloured and deleted; applied to and removed from a card; a due
 * date picked and cleared; cards found by full-text search and by label. At 390 px the
 * board's screens fit the screen.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { journey, openConsole, overflow, SIGNED_OUT, unexpected } from "../helpers/browser";
import { createOperator, field, OPERATOR, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";

const T = 60_000;
let f: ConsoleFixture;
let token: string;
beforeAll(async () => {
  f = await startConsole();
  token = await createOperator(f.app);
}, T);
afterAll(async () => void (await f?.stop()));

/** The session's card-board key as the console holds it (sessionStorage of this tab). */
const heldKey = (page: Page, wsId: string) => page.evaluate((id) => JSON.parse(sessionStorage.getItem(`bunker.session-key.tack.${id}`) ?? "null"), wsId);

test("console: one card-board key per session, reused across visits and a reload, revoked on sign-out", async () => {
  const { cp, page, ws } = await inWorkspace("keys");
  await journey(cp, "tack-key", async () => {
    const liveKeys = async () => (await f.app.call("GET", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token })).body.data.filter((k: any) => !k.revoked_at);
    for (let visit = 0; visit < 4; visit++) {
      await screen(page, "Card board", "Boards");
      await page.getByTestId("board-key-note").waitFor();
      await page.getByRole("heading", { name: "Create a board workspace" }).waitFor();
      if (visit === 2) {
        await page.reload();
        await page.getByRole("heading", { name: "Create a board workspace" }).waitFor();
      }
      await screen(page, "Workspace", "Overview");
    }
    const keys = await liveKeys();
    expect(keys).toHaveLength(1);
    expect(keys[0].name).toStartWith("Admin console card board");
    expect(Date.parse(keys[0].expires_at) - Date.now()).toBeGreaterThan(11 * 3600_000);
    const held = await heldKey(page, ws.id);
    expect(held.id).toBe(keys[0].id);
    // Nothing outlives the tab: the key is in sessionStorage only.
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain("svc_");
    expect((await f.app.call("GET", "/tack/api/v1/workspaces", { token: held.key })).status).toBe(200);

    // A key revoked under API keys is replaced on the next call, still one live key.
    expect((await f.app.call("DELETE", `/platform/v1/workspaces/${ws.slug}/api-keys/${held.id}`, { token })).status).toBe(204);
    await screen(page, "Card board", "Boards");
    await page.getByRole("table", { name: "Board workspaces" }).getByText("No board workspace yet.").waitFor();
    const replaced = await liveKeys();
    expect(replaced).toHaveLength(1);
    expect(replaced[0].id).not.toBe(held.id);
    const current = await heldKey(page, ws.id);
    expect(current.id).toBe(replaced[0].id);

    // Sign-out revokes it: the board answers 401 with it, and the tab forgets it.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect((await f.app.call("GET", "/tack/api/v1/workspaces", { token: current.key })).status).toBe(401);
    expect(await liveKeys()).toHaveLength(0);
    expect(await heldKey(page, ws.id)).toBeNull();
    expect(unexpected(cp.errors, [SIGNED_OUT, /status of 401 .*\/tack\/api\/v1\/workspaces/])).toEqual([]);
  });
  await cp.context.close();
}, T);

test("console: card board with drag and drop, keyboard moves, comments and activity", async () => {
  const { cp, page, ws } = await inWorkspace("acme");
  await journey(cp, "tack", async () => {
    await screen(page, "Card board", "Boards");
    await page.getByRole("heading", { name: "Create a board workspace" }).waitFor();

    // Board workspace and project from the page.
    await field(page, "Name").fill("team");
    await field(page, "Display name").fill("Team");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.getByRole("heading", { name: "Create a project" }).waitFor();
    await field(page, "Name").fill("launch");
    await field(page, "Display name").fill("Launch");
    await page.getByRole("button", { name: "Create project" }).click();
    const todo = page.getByRole("region", { name: "List todo" });
    const doing = page.getByRole("region", { name: "List doing" });
    const done = page.getByRole("region", { name: "List done" });
    await todo.waitFor();

    // Cards added in todo.
    for (const title of ["Write docs", "Fix login"]) {
      await field(page, "New card in todo").fill(title);
      await todo.getByRole("button", { name: "Add card" }).click();
      await todo.getByRole("link", { name: title }).waitFor();
    }
    await cp.shot("tack-board");

    // Drag "Write docs" onto the doing list: the move API puts it there.
    await todo.locator("li[data-card='Write docs']").dragTo(doing.locator("ul"));
    await doing.getByRole("link", { name: "Write docs" }).waitFor();
    await page.getByRole("status").getByText('Moved "Write docs" to doing').waitFor();
    // The board's API takes API keys only: the test reads it with a key of its own.
    const reader = (await f.app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token, body: { name: "test reader", policy: [{ effect: "allow", actions: ["tack.*"], resources: ["*"] }] } })).body.key;
    const cardsVia = async () => {
      const r = await f.app.call("GET", "/tack/api/v1/workspaces/team/projects/launch/cards", { token: reader });
      const lists = (await f.app.call("GET", "/tack/api/v1/workspaces/team/projects/launch/lists", { token: reader })).body.data;
      const name = Object.fromEntries(lists.map((l: any) => [l.id, l.name]));
      return Object.fromEntries(r.body.data.map((c: any) => [c.title, name[c.list_id]]));
    };
    expect(await cardsVia()).toEqual({ "Write docs": "doing", "Fix login": "todo" });

    // Keyboard fallback: focus the card's "next list" button and press Enter.
    await doing.getByRole("button", { name: "Move Write docs to the next list" }).focus();
    await page.keyboard.press("Enter");
    await done.getByRole("link", { name: "Write docs" }).waitFor();
    expect((await cardsVia())["Write docs"]).toBe("done");

    // Card detail: a comment, the moves in the activity, complete.
    await done.getByRole("link", { name: "Write docs" }).click();
    await field(page, "Comment").fill("Shipped in **v2**.");
    await page.getByRole("button", { name: "Comment", exact: true }).click();
    await page.getByRole("list", { name: "Comments" }).getByText("Shipped in **v2**.").waitFor();
    const activity = page.getByRole("table", { name: "Activity" });
    await activity.getByText("card.moved").first().waitFor();
    expect(await activity.getByText("card.moved").count()).toBe(2);
    await page.getByRole("button", { name: "Complete" }).click();
    await page.getByRole("region", { name: "Write docs" }).getByText("completed", { exact: true }).waitFor();
    await cp.shot("tack-card");

    expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
  });
  await cp.context.close();
}, T);

/** The operator signed in at `width` px with a fresh workspace selected (the menu opened on a phone). */
async function inWorkspace(slug: string, width = 1280) {
  const ws = await f.app.call("POST", "/platform/v1/workspaces", { token, body: { slug, display_name: `Workspace ${slug}` } });
  expect(ws.status).toBe(201);
  const cp = await openConsole(f.browser, f.base, { width, height: 860 });
  const page = cp.page;
  await page.goto("/admin/");
  await page.getByLabel("Email or username").fill(OPERATOR.username);
  await page.getByLabel("Password").fill(OPERATOR.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("combobox", { name: "Workspace" }).selectOption(slug);
  await page.getByRole("heading", { name: "Workspace · Overview" }).waitFor();
  return { cp, page, ws: ws.body as { id: string; slug: string } };
}

for (const width of [1280, 390]) {
  test(`console at ${width} px: labels managed and applied, a due date picked and cleared, cards found by words and by label`, async () => {
    const slug = `lab${width}`;
    const { cp, page, ws } = await inWorkspace(slug, width);
    await journey(cp, `tack-labels-${width}`, async () => {
      if (width < 720) await page.getByRole("button", { name: "Menu" }).click();
      await screen(page, "Card board", "Boards");
      await page.getByTestId("board-key-note").waitFor();
      const key = (await heldKey(page, ws.id)).key as string;
      const api = (method: string, path: string, body?: unknown) => f.app.call(method, `/tack/api/v1/workspaces/${path}`, { token: key, body });
      expect((await api("POST", "", { name: "team" })).status).toBe(201);
      expect((await api("POST", "team/projects", { name: "launch", lists: [{ name: "todo" }, { name: "done" }] })).status).toBe(201);
      for (const [title, body] of [["Write docs", "The setup guide and the API reference"], ["Fix login", "Sign-in fails after a password reset"], ["Ship it", "Release notes"]]) {
        expect((await api("POST", "team/projects/launch/cards", { title, body, list: "todo" })).status).toBe(201);
      }
      await page.goto(`/admin/#/w/${slug}/board/boards/team`);

      // Labels: create two, rename and recolour one, delete the other.
      const labels = page.getByRole("region", { name: "Labels" });
      for (const [name, color] of [["bug", "#d73a4a"], ["docs", "#0075ca"]]) {
        await field(page, "Label name").fill(name);
        await field(page, "Label colour").fill(color);
        await labels.getByRole("button", { name: "Create label" }).click();
        await labels.getByRole("table", { name: "Labels" }).getByText(color).waitFor();
      }
      await labels.getByRole("button", { name: "Edit label docs" }).click();
      await field(page, "New name of docs").fill("documentation");
      await field(page, "Colour of docs").fill("#1d76db");
      await labels.getByRole("button", { name: "Save label" }).click();
      await labels.getByText("#1d76db").waitFor();
      await labels.getByRole("button", { name: "Delete label bug" }).click();
      await labels.getByRole("button", { name: "Confirm: cards lose it" }).click();
      await labels.getByText("#d73a4a").waitFor({ state: "detached" });
      expect((await api("GET", "team/labels")).body.data.map((l: any) => [l.name, l.color.toLowerCase()])).toEqual([["documentation", "#1d76db"]]);
      expect(await overflow(page)).toEqual([]);
      await cp.shot(`tack-labels-${width}`);

      // A card: the label applied and removed, a due date picked and cleared.
      const card = (await api("GET", "team/projects/launch/cards?q=docs")).body.data[0];
      await page.goto(`/admin/#/w/${slug}/board/boards/team/launch/${card.id}`);
      const toggles = page.getByRole("list", { name: "Card labels" });
      await toggles.getByRole("checkbox").check();
      await page.getByRole("table", { name: "Activity" }).getByText("documentation").waitFor();
      expect((await api("GET", `team/projects/launch/cards/${card.id}`)).body.labels).toEqual(["documentation"]);
      const due = "2026-12-24T17:30";
      await field(page, "Due").fill(due);
      await page.getByRole("button", { name: "Save card" }).click();
      await page.getByRole("button", { name: "Clear due date" }).waitFor();
      const dueIso = await page.evaluate((v) => new Date(v).toISOString(), due);
      expect((await api("GET", `team/projects/launch/cards/${card.id}`)).body.due_at).toBe(dueIso);
      expect(await field(page, "Due").inputValue()).toBe(due);
      expect(await overflow(page)).toEqual([]);
      await cp.shot(`tack-card-labels-${width}`);
      await page.getByRole("button", { name: "Clear due date" }).click();
      // The card read back without a due date empties the picker (the button says "Working…" before that).
      await page.waitForFunction(() => (document.getElementById("card-edit-due_at") as HTMLInputElement | null)?.value === "");
      await page.getByRole("button", { name: "Clear due date" }).waitFor({ state: "detached" });
      expect((await api("GET", `team/projects/launch/cards/${card.id}`)).body.due_at).toBeNull();

      // Search: words of a body, then a label.
      await page.getByRole("link", { name: "← Board" }).click();
      const search = page.getByRole("region", { name: "Search cards" });
      await field(page, "Words in title or body").fill("password");
      await search.getByRole("button", { name: "Search", exact: true }).click();
      const found = search.getByRole("table", { name: "Matching cards" });
      await search.getByRole("status").getByText("1 matching card.").waitFor();
      await found.getByRole("link", { name: "Fix login" }).waitFor();
      await field(page, "Words in title or body").fill("");
      await field(page, "Label").selectOption("documentation");
      await search.getByRole("button", { name: "Search", exact: true }).click();
      await found.getByRole("link", { name: "Write docs" }).waitFor();
      await found.getByRole("link", { name: "Fix login" }).waitFor({ state: "detached" });
      expect(await overflow(page)).toEqual([]);
      await cp.shot(`tack-search-${width}`);
      await search.getByRole("button", { name: "Clear search" }).click();
      await found.waitFor({ state: "detached" });
      expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
    });
    await cp.context.close();
  }, T);
}
