/**
 * Console journey, card board: the console creates a 12-hour tack.* key for the session
 * (the board's API takes only API keys), a board workspace and a project with three lists
 * from the page, a card added, dragged to another list (the move API: the API then holds
 * it there), moved on with the keyboard fallback, and its detail with a comment and the
 * activity of its moves.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { journey, SIGNED_OUT, unexpected } from "../helpers/browser";
import { field, operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";

const T = 60_000;
let f: ConsoleFixture;
beforeAll(async () => void (f = await startConsole()), T);
afterAll(async () => void (await f?.stop()));

test("console: card board with drag and drop, keyboard moves, comments and activity", async () => {
  const { cp, page, token, ws } = await operatorInWorkspace(f);
  await journey(cp, "tack", async () => {
    await screen(page, "Card board", "Boards");
    await page.getByRole("button", { name: "Create a 12-hour key for this session" }).click();
    await page.getByRole("heading", { name: "Create a board workspace" }).waitFor();
    const keysNow = (await f.app.call("GET", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token })).body.data;
    expect(keysNow).toHaveLength(1);
    expect(keysNow[0].name).toStartWith("Admin console card board");
    expect(keysNow[0].expires_at).not.toBeNull();
    // Nothing of the key is kept in storage.
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).not.toContain("svc_");

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
}, T);
