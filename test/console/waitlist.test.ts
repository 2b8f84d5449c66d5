/**
 * Console journey, waitlists: a waitlist created and opened from the page, two sign-ups
 * through the public API, one approved from its row (its Auth invite refused, with the reason
 * in the row) and the other rejected in bulk (the API then holds both decisions), the
 * analytics charts, the settings saved, the CSV export link.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { journey, overflow, SIGNED_OUT, unexpected } from "../helpers/browser";
import { field, operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";
import { until } from "../helpers/until";

const T = 60_000;
let f: ConsoleFixture;
beforeAll(async () => void (f = await startConsole()), T);
afterAll(async () => void (await f?.stop()));

test("console: waitlist created, opened, entries approved and rejected", async () => {
  const { cp, page, token, ws } = await operatorInWorkspace(f);
  await journey(cp, "waitlist", async () => {
    const base = `/waitlist/v1/workspaces/${ws.id}`;

    // Create: the page opens the new waitlist (draft), then Open makes it public.
    await screen(page, "Waitlists", "Waitlists");
    await field(page, "Display name").fill("Acme beta");
    await field(page, "Slug").fill("beta");
    await page.getByRole("button", { name: "Create waitlist" }).click();
    const head = page.getByRole("region", { name: "Acme beta" });
    await head.getByText("draft", { exact: true }).waitFor();
    const wl = (await f.app.call("GET", `${base}/waitlists`, { token })).body.data[0];
    expect(wl.slug).toBe("beta");
    await page.getByRole("button", { name: "Open", exact: true }).click();
    await head.getByText("open", { exact: true }).waitFor();
    expect((await f.app.call("GET", `${base}/waitlists/${wl.id}`, { token })).body.status).toBe("open");

    // Two people sign up through the public API; Refresh lists them in queue order.
    for (const [email, name] of [["ada@example.com", "Ada"], ["bob@example.com", "Bob"]]) {
      const r = await f.app.call("POST", `/waitlist/v1/waitlists/${ws.slug}/beta/entries`, { body: { email, name } });
      expect(r.status).toBe(201);
    }
    await page.getByRole("button", { name: "Refresh" }).click();
    const entries = page.getByRole("table", { name: "Entries" });
    await entries.getByText("bob@example.com").waitFor();
    await page.getByTestId("entry-counts").getByText("2 in all: 2 pending").waitFor();
    await cp.shot("waitlist-entries");

    // Approved entries are invited into the workspace's Auth App, where Ada already is a user.
    expect((await f.app.call("POST", "/auth/v1/apps", { token, body: { workspace_id: ws.id, slug: "beta-app", display_name: "Beta App" } })).status).toBe(201);
    expect((await f.app.call("POST", "/auth/beta-app/v1/admin/users", { token, body: { email: "ada@example.com", password: "correct horse battery" } })).status).toBe(201);
    expect((await f.app.call("PUT", `${base}/waitlist/settings`, { token, body: { default_auth_app_slug: "beta-app" } })).body.default_auth_app_slug).toBe("beta-app");

    // Approve Ada from her row: the invite is pending, then (the job runs after the approval) failed, and the row says why.
    const ada = entries.locator("tr", { hasText: "ada@example.com" });
    await ada.getByRole("button", { name: "Approve" }).click();
    await ada.getByText("approved", { exact: true }).waitFor();
    await until("Ada's refused invite in her row", async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return /failed.*EMAIL_TAKEN/.test((await ada.getByTestId("entry-invite").textContent({ timeout: 2000 }).catch(() => "")) ?? "");
    });
    await ada.getByTestId("entry-invite").getByText("A user with this email already exists").waitFor();
    await cp.shot("waitlist-invite-failed");
    await page.getByRole("checkbox", { name: "Select bob@example.com" }).check();
    await page.getByRole("button", { name: "Reject selected" }).click();
    await page.getByRole("status").getByText("Rejected 1 entry.").waitFor();
    await entries.locator("tr", { hasText: "bob@example.com" }).getByText("rejected", { exact: true }).waitFor();
    await page.getByTestId("entry-counts").getByText("1 approved, 1 rejected").waitFor();
    const all = (await f.app.call("GET", `${base}/waitlists/${wl.id}/entries`, { token })).body.data;
    expect(Object.fromEntries(all.map((e: any) => [e.email, e.status]))).toEqual({ "ada@example.com": "approved", "bob@example.com": "rejected" });

    // Filter: only the approved one.
    await field(page, "Status").selectOption("approved");
    await page.getByRole("button", { name: "Apply" }).click();
    await entries.getByText("bob@example.com").waitFor({ state: "detached" });
    await entries.getByText("ada@example.com").waitFor();

    // The CSV export link downloads the entries (the session cookie authorises it).
    const href = await page.getByRole("link", { name: "Export CSV" }).getAttribute("href");
    expect(href).toBe(`${base}/waitlists/${wl.id}/entries/export.csv`);
    const csv = await page.evaluate(async (u) => (await fetch(u!)).text(), href);
    expect(csv.split("\r\n")[0]).toStartWith("id,email,name");
    expect(csv).toContain("ada@example.com");

    // Analytics: totals and charts. Four landing-page views (the public configuration, which
    // shows the default variant) against the two sign-ups, which named no variant: they count
    // for the default variant, so its row and the totals both say 50.0% (not 0% beside 200%).
    for (let i = 0; i < 4; i++) expect((await f.app.call("GET", `/waitlist/v1/waitlists/${ws.slug}/beta`)).status).toBe(200);
    await page.getByRole("tab", { name: "Analytics" }).click();
    const totals = page.getByTestId("analytics-totals");
    await totals.getByText("Sign-ups", { exact: true }).waitFor();
    expect(await totals.locator("dd").allTextContents()).toEqual(["2", "1", "1", "0", "4", "50.0%"]);
    const variants = page.getByRole("table", { name: "Variants" });
    expect(await variants.locator("tbody tr").count()).toBe(1);
    expect(await variants.locator("tbody tr td").allTextContents()).toEqual(["default", "4", "2", "50.0%"]);
    expect(await page.locator(".chart canvas").count()).toBeGreaterThanOrEqual(2);
    await cp.shot("waitlist-analytics");
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await overflow(page)).toEqual([]);
    await cp.shot("waitlist-analytics-390");
    await page.setViewportSize({ width: 1280, height: 860 });

    // Settings: a maximum, saved through PATCH.
    await page.getByRole("tab", { name: "Settings" }).click();
    await field(page, "Maximum entries (empty: no limit)").fill("100");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    expect((await f.app.call("GET", `${base}/waitlists/${wl.id}`, { token })).body.settings.max_entries).toBe(100);

    // Workspace settings: a bad colour shows the API's message next to its field.
    await screen(page, "Waitlists", "Settings");
    await field(page, "Primary colour (#RRGGBB)").fill("orange");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.locator("#waitlist-ws-settings-primary_color[aria-invalid=true]").waitFor();
    await field(page, "Primary colour (#RRGGBB)").fill("#FF6600");
    await field(page, "Brand name").fill("Acme");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    const wss = (await f.app.call("GET", `${base}/waitlist/settings`, { token })).body;
    expect([wss.brand_name, wss.primary_color]).toEqual(["Acme", "#FF6600"]);

    // The waitlist's webhook scope: its event types offered on the endpoints screen.
    await screen(page, "Webhooks", "Endpoints");
    await page.getByLabel("Scope").selectOption("waitlist");
    await page.getByText(/Known: .*entry\.approved/).waitFor();

    expect(unexpected(cp.errors, [SIGNED_OUT, /status of 400 .*\/waitlist\/settings$/])).toEqual([]);
  });
}, T);
