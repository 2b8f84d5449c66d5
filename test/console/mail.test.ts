/**
 * Console journey, mail: a domain with its DNS records (copied from the page, published on
 * a loopback DNS server, then checked to active), the brand with its preview, a template
 * written with the live preview and lint then saved, a message in the log with the
 * timeline and the deliverability verdict, and a suppression added and removed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { journey, overflow, SIGNED_OUT, unexpected } from "../helpers/browser";
import { field, operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server";

const T = 60_000;
let f: ConsoleFixture;
let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  f = await startConsole({ DNS_SERVERS: dns.server, MAIL_HOSTNAME: "mx.bunker.test" });
}, T);
afterAll(async () => {
  await f?.stop();
  await dns?.stop();
});

const txtStrings = (value: string): string[] => (value.startsWith('"') ? [...value.matchAll(/"([^"]*)"/g)].map((m) => m[1]!) : [value]);

test("console: mail domains, brand, templates, messages, suppressions", async () => {
  const { cp, page, token, ws } = await operatorInWorkspace(f);
  await journey(cp, "mail", async () => {
    const base = `/mail/v1/workspaces/${ws.id}`;

    // Domain: add it; the page lists its DNS records with copy buttons.
    await screen(page, "Mail", "Domains");
    await field(page, "Domain").fill("mail.acme.example");
    await page.getByRole("button", { name: "Add domain" }).click();
    const records = page.getByRole("table", { name: "DNS records" });
    await records.waitFor();
    const domain = (await f.app.call("GET", `${base}/domains`, { token })).body.data[0];
    const first = domain.dns_instructions[0];
    await records.getByText(first.host).first().waitFor();
    await records.locator("tbody tr").first().getByRole("button", { name: /^Copy: / }).last().click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(first.value);
    await cp.shot("mail-domain-pending");
    // Publish the records, check now: active on the page and in the API.
    for (const ins of domain.dns_instructions) {
      if (ins.type === "MX") dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
      else dns.add(ins.host, { type: "TXT", data: txtStrings(ins.value) });
    }
    await page.getByRole("button", { name: "Check DNS now" }).click();
    await page.getByRole("region", { name: "mail.acme.example" }).getByText("active", { exact: true }).waitFor();
    expect((await f.app.call("GET", `${base}/domains/${domain.id}`, { token })).body.status).toBe("active");
    await cp.shot("mail-domain-active");
    // At phone width the domain page fits the screen: long record values wrap or scroll in the table's own box.
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await overflow(page)).toEqual([]);
    await cp.shot("mail-domain-390");
    await page.setViewportSize({ width: 1280, height: 860 });

    // Brand: saved through the API; the preview (a sandboxed frame) shows it.
    await screen(page, "Mail", "Brand");
    await field(page, "Brand name").fill("Acme Mail");
    await page.getByRole("button", { name: "Save brand" }).click();
    await page.frameLocator('iframe[title="Brand preview"]').getByText("Acme Mail").first().waitFor();
    expect((await f.app.call("GET", `${base}/brand`, { token })).body.raw.brand_name).toBe("Acme Mail");
    expect(await page.locator('iframe[title="Brand preview"]').getAttribute("sandbox")).toBe("");

    // Template: the preview follows the typing; lint gives a score; saving stores it.
    await screen(page, "Mail", "Templates");
    await page.getByRole("link", { name: "New template" }).click();
    await field(page, "Name").fill("welcome");
    await field(page, "Subject").fill("Welcome to {{product}}, {{name}}");
    await field(page, "Sample data (JSON, for the preview)").fill('{"name": "Ada", "product": "Acme"}');
    await page.getByTestId("preview-subject").getByText("Welcome to Acme, Ada").waitFor();
    await field(page, "HTML body").fill("<p>Hello {{name}}, your order is ready.</p>");
    await page.frameLocator('iframe[title="Template preview"]').getByText("Hello Ada, your order is ready.").waitFor();
    const score = Number(await page.getByTestId("lint-score").textContent());
    expect(score).toBeGreaterThanOrEqual(0);
    expect(score).toBeLessThanOrEqual(100);
    await cp.shot("mail-template-editor");
    await page.getByRole("button", { name: "Save template" }).click();
    await page.getByRole("heading", { name: "Template welcome" }).waitFor();
    const saved = await f.app.call("GET", `${base}/templates/welcome`, { token });
    expect(saved.body.subject).toBe("Welcome to {{product}}, {{name}}");
    expect(saved.body.body_html).toContain("Hello {{name}}");

    // Messages: one sent through the API shows in the log, found by recipient.
    const sent = await f.app.call("POST", `${base}/templates/welcome/send`, { token, body: { from: "hello@mail.acme.example", to: "ada@example.com", data: { name: "Ada", product: "Acme" } } });
    expect(sent.status).toBe(202);
    await screen(page, "Mail", "Messages");
    await page.getByTestId("verdict-summary").waitFor();
    await page.locator(".chart canvas").first().waitFor();
    await field(page, "Recipient").fill("ada@example.com");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByRole("table", { name: "Messages" }).getByText("Welcome to Acme, Ada").waitFor();
    await cp.shot("mail-messages");

    // Suppressions: add, then remove.
    await screen(page, "Mail", "Suppressions");
    await field(page, "Email").fill("bounced@example.com");
    await page.getByRole("button", { name: "Suppress" }).click();
    const sup = page.getByRole("table", { name: "Suppressions" });
    await sup.getByText("bounced@example.com").waitFor();
    const emails = async () => (await f.app.call("GET", `${base}/suppressions`, { token })).body.data.map((s: any) => s.email);
    expect(await emails()).toContain("bounced@example.com"); // (ada@example.com is there too: no MX, it bounced)
    const row = sup.locator("tr", { hasText: "bounced@example.com" });
    await row.getByRole("button", { name: "Remove" }).click();
    await row.getByRole("button", { name: "Confirm remove" }).click();
    await sup.getByText("bounced@example.com").waitFor({ state: "detached" });
    expect(await emails()).not.toContain("bounced@example.com");

    expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
  });
}, T);
