/**
 * Console journey, mail sandbox: the domains screen makes the sandbox domain (marked "not for
 * production"), a message the sandbox sends to an outside address shows in the Dev outbox
 * and its reader (HTML in a sandboxed frame), at 1280 px and at 390 px without sideways
 * scrolling.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { journey, overflow, SIGNED_OUT, unexpected } from "../helpers/browser";
import { operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";

const T = 60_000;
const NOTE = "Sandbox — for trying Bunker out, not for production";
let f: ConsoleFixture;
beforeAll(async () => {
  f = await startConsole({ MAIL_HOSTNAME: "localhost" });
}, T);
afterAll(async () => {
  await f?.stop();
});

test("console: create the sandbox domain, read a caught message in the Dev outbox (1280 px and 390 px)", async () => {
  const { cp, page, token, ws } = await operatorInWorkspace(f);
  await journey(cp, "mail-sandbox", async () => {
    const base = `/mail/v1/workspaces/${ws.id}`;
    const fits = async (shot: string) => {
      await page.setViewportSize({ width: 390, height: 800 });
      expect(await overflow(page)).toEqual([]);
      await cp.shot(`${shot}-390`);
      await page.setViewportSize({ width: 1280, height: 860 });
    };

    // Domains: the card makes the sandbox domain and opens it, badge and all.
    await screen(page, "Mail", "Domains");
    await page.getByRole("region", { name: "Try mail without DNS" }).getByText(NOTE).waitFor();
    await page.getByRole("button", { name: "Create sandbox domain" }).click();
    await page.getByText("No DNS needed", { exact: false }).waitFor();
    const domains = (await f.app.call("GET", `${base}/domains`, { token })).body.data;
    expect(domains.map((d: any) => [d.sandbox, d.status])).toEqual([[true, "active"]]);
    const sandbox = domains[0];
    const detail = page.getByRole("region", { name: sandbox.fqdn });
    await detail.getByText(NOTE).waitFor();
    expect(await page.getByRole("table", { name: "DNS records" }).count()).toBe(0);
    await cp.shot("mail-sandbox-domain");
    await fits("mail-sandbox-domain");
    // The list marks it; the card is gone once the workspace has its sandbox.
    await page.getByRole("link", { name: "← All domains" }).click();
    await page.getByRole("table", { name: "Domains" }).getByText(NOTE).waitFor();
    expect(await page.getByRole("region", { name: "Try mail without DNS" }).count()).toBe(0);

    // A send from the sandbox to an outside address is caught in the Dev outbox.
    expect((await f.app.call("POST", `${base}/templates`, { token, body: { name: "hello", subject: "Hello {{name}}", body_html: "<h1>Hi {{name}}</h1><p>From the sandbox.</p>" } })).status).toBe(201);
    const sent = await f.app.call("POST", `${base}/templates/hello/send`, { token, body: { from: `Acme <hello@${sandbox.fqdn}>`, to: "ada@example.com", data: { name: "Ada" } } });
    expect(sent.status).toBe(202);
    await screen(page, "Mail", "Dev outbox");
    const outbox = page.getByRole("table", { name: "Dev outbox" });
    // The worker delivers in the background: Refresh until the message is there.
    for (let i = 0; !(await outbox.getByText("Hello Ada").count()); i++) {
      if (i > 200) throw new Error("the caught message never showed in the Dev outbox");
      await page.getByRole("button", { name: "Refresh" }).click();
      await page.getByRole("button", { name: "Refresh" }).and(page.locator(":enabled")).waitFor();
    }
    await page.getByRole("region", { name: "Dev outbox" }).getByText(NOTE).waitFor();
    await outbox.getByText("ada@example.com").waitFor();
    await cp.shot("mail-sandbox-outbox");
    await fits("mail-sandbox-outbox");

    // The reader: metadata and the HTML in a frame with no script and no same origin.
    await outbox.getByRole("link", { name: "Hello Ada" }).click();
    const reader = page.getByRole("region", { name: "Hello Ada" });
    await reader.getByText("ada@example.com").waitFor();
    await reader.getByText(NOTE).waitFor();
    await page.frameLocator('iframe[title="Captured message"]').getByRole("heading", { name: "Hi Ada" }).waitFor();
    expect(await page.locator('iframe[title="Captured message"]').getAttribute("sandbox")).toBe("");
    await reader.getByText(sent.body.message_ids[0]).waitFor();
    await cp.shot("mail-sandbox-reader");
    await fits("mail-sandbox-reader");
    expect((await f.app.call("GET", `${base}/messages/${sent.body.message_ids[0]}`, { token })).body).toMatchObject({ status: "delivered", sandbox: true, delivered_to: "outbox" });

    expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
  });
}, T);
