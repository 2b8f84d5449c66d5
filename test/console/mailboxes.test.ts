/**
 * Console journey, mailboxes: a mailbox created on an active receiving domain, a message
 * sent to it over SMTP (HTML with a script, an event handler, a javascript: link, a form, a
 * remote image, a remote CSS background written with a CSS escape, an inline cid image, and
 * a PDF attachment), listed in its inbox, read in the sandboxed reader with the remote
 * resources blocked and the inline image shown, the attachment downloaded, and the message
 * marked read in the API. Then a hostile message (event handlers that fire on their own,
 * javascript: links, an <img onerror> hidden in SVG style text as entities) is read: the page
 * reports no Content-Security-Policy violation at all (Chromium reports one as soon as an
 * event-handler attribute is set on an element of any document the page's script creates,
 * inert ones included, so the sanitiser must not let one reach a parser) and the reader's
 * document has no event-handler attribute.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTransport } from "nodemailer";
import { SmtpListener } from "../../src/core/smtp-listener";
import { journey, SIGNED_OUT, unexpected } from "../helpers/browser";
import { field, operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server";

const T = 60_000;
let f: ConsoleFixture;
let dns: TestDnsServer;
let smtp: SmtpListener;
let port = 0;
beforeAll(async () => {
  dns = await startDnsServer();
  f = await startConsole({ DNS_SERVERS: dns.server, MAIL_HOSTNAME: "mx.bunker.test" });
  if (f.app.smtpPort) {
    port = f.app.smtpPort; // the binary's own MX listener
    return;
  }
  smtp = new SmtpListener({ port: 0, host: "127.0.0.1", log: f.app.ctx.log, name: "mx.bunker.test", closeTimeoutMs: 500 });
  smtp.setHandler(f.app.inbound!);
  port = await smtp.start();
}, T);
afterAll(async () => {
  await smtp?.stop();
  await f?.stop();
  await dns?.stop();
});

const txtStrings = (value: string): string[] => (value.startsWith('"') ? [...value.matchAll(/"([^"]*)"/g)].map((m) => m[1]!) : [value]);
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
const HTML =
  '<html><body><h1 onclick="alert(1)">Invoice ready</h1><p>Hello Ada, your invoice is attached.</p>' +
  '<p style="color: navy; background: \\75 rl(https://tracker.example/bg.png)">Terms: <a href="javascript:alert(1)">accept</a></p>' +
  '<form action="https://phish.example/"><input name="password"></form>' +
  '<img alt="tracker" src="https://tracker.example/pixel.gif"><img alt="logo" src="cid:logo@acme"><script>document.title="pwned"</script></body></html>';

const HOSTILE =
  '<html><body onload="alert(1)"><p>Open me</p><img alt="x" src="x" onerror="alert(2)"><svg onload="alert(3)"><circle r="1"/></svg>' +
  "<svg><style>&lt;/style&gt;&lt;img src=x onerror=alert(4)&gt;</style></svg>" +
  '<details open ontoggle="alert(5)"><summary>More</summary>Details</details>' +
  '<a href="javascript:alert(6)">click</a> <a href="https://example.com/" onmouseover="alert(7)">site</a></body></html>';

/** Records every securitypolicyviolation event of the page (and of pages it loads later). */
function recordCspViolations() {
  const w = window as unknown as { cspViolations?: string[] };
  if (w.cspViolations) return;
  w.cspViolations = [];
  document.addEventListener("securitypolicyviolation", (e) => w.cspViolations!.push(`${e.violatedDirective} @ ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`), true);
}

test("console: mailbox created, message read sanitised, attachment listed", async () => {
  const { cp, page, token, ws } = await operatorInWorkspace(f);
  await page.addInitScript(recordCspViolations);
  await page.evaluate(recordCspViolations);
  const cspViolations = () => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
  await journey(cp, "mailboxes", async () => {
    const base = `/mail/v1/workspaces/${ws.id}`;
    // A receiving domain, active on the loopback DNS server (through the API).
    const d = await f.app.call("POST", `${base}/domains`, { token, body: { fqdn: "in.acme.example", intent: "receive" } });
    for (const ins of d.body.dns_instructions) {
      if (ins.type === "MX") dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
      else dns.add(ins.host, { type: "TXT", data: txtStrings(ins.value) });
    }
    expect((await f.app.call("POST", `${base}/domains/${d.body.id}/verify`, { token })).body.status).toBe("active");

    // The mailbox, created from the page.
    await screen(page, "Mailboxes", "Mailboxes");
    await field(page, "Local part").fill("billing");
    await field(page, "Display name").fill("Billing");
    await page.getByRole("button", { name: "Create mailbox" }).click();
    await page.getByRole("table", { name: "Mailboxes" }).getByText("billing@in.acme.example").waitFor();
    const [box] = (await f.app.call("GET", `${base}/mailboxes`, { token })).body.data;
    expect(box.display_name).toBe("Billing");

    // A message arrives over SMTP.
    const t = createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, name: "client.sender.example" } as never);
    await t.sendMail({
      from: "Ada <ada@sender.example>",
      to: "billing@in.acme.example",
      subject: "Invoice 42",
      text: "Hello Ada, your invoice is attached.",
      html: HTML,
      attachments: [
        { filename: "logo.png", content: PNG, contentType: "image/png", cid: "logo@acme" },
        { filename: "invoice-42.pdf", content: Buffer.from("%PDF-1.4 fake invoice"), contentType: "application/pdf" },
      ],
    } as never);
    t.close();

    // Inbox: the message listed (unread, bold); the reader shows it sanitised.
    await page.getByRole("link", { name: "billing@in.acme.example" }).click();
    const inbox = page.getByRole("table", { name: "Received messages" });
    await inbox.getByText("Invoice 42").waitFor();
    await inbox.getByText("Invoice 42").click();
    const frame = page.frameLocator('iframe[title="Received message"]');
    await frame.getByText("Hello Ada, your invoice is attached.").waitFor();
    await page.getByTestId("blocked-note").getByText("2 remote resources blocked.").waitFor();
    const iframe = page.locator('iframe[title="Received message"]');
    expect(await iframe.getAttribute("sandbox")).toBe("");
    const srcdoc = (await iframe.getAttribute("srcdoc"))!;
    expect(srcdoc).not.toContain("<script");
    expect(srcdoc).not.toContain("onclick");
    expect(srcdoc).not.toContain("tracker.example");
    expect(srcdoc).not.toContain("javascript:");
    expect(srcdoc).not.toContain("<form");
    expect(srcdoc).not.toContain("<input");
    expect(srcdoc).toContain("color: navy"); // the rest of the style attribute kept
    expect(srcdoc).toContain('src="data:image/png;base64,'); // the inline cid image
    expect(await frame.locator('img[alt="logo"]').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1);
    await cp.shot("mailbox-reader");

    // Attachments: both in the manifest; the PDF downloads with the session.
    const atts = page.getByRole("table", { name: "Attachments" });
    await atts.getByText("invoice-42.pdf").waitFor();
    await atts.getByText("logo.png").waitFor();
    const href = await atts.getByRole("link", { name: "invoice-42.pdf" }).getAttribute("href");
    expect(await page.evaluate(async (u) => (await fetch(u!)).text(), href)).toBe("%PDF-1.4 fake invoice");

    // Opening it marked it read.
    const [msg] = (await f.app.call("GET", `${base}/mailboxes/${box.id}/messages`, { token })).body.data;
    expect(msg.read_at).not.toBeNull();

    // A hostile message: nothing in it reaches a parser with an event handler, so the page's
    // CSP has nothing to block and reports nothing.
    const h = createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, name: "client.sender.example" } as never);
    await h.sendMail({ from: "Mallory <mallory@sender.example>", to: "billing@in.acme.example", subject: "Hostile 43", text: "Open me", html: HOSTILE } as never);
    h.close();
    await page.getByRole("link", { name: "← Inbox" }).click();
    await inbox.getByText("Hostile 43").waitFor();
    await inbox.getByText("Hostile 43").click();
    await frame.getByText("Open me").waitFor();
    await page.getByTestId("blocked-note").getByText("1 remote resource blocked.").waitFor(); // <img src="x">
    await frame.getByText("Details").waitFor();
    const handlers = await frame.locator("*").evaluateAll((els) => els.flatMap((el) => [...el.attributes].map((a) => a.name)).filter((n) => /^on/i.test(n)));
    expect(handlers).toEqual([]);
    const hostile = (await iframe.getAttribute("srcdoc"))!;
    expect(hostile).not.toContain("javascript:");
    expect(hostile).not.toContain("<svg");
    expect(await cspViolations()).toEqual([]);

    // Disable the mailbox from the list.
    await screen(page, "Mailboxes", "Mailboxes");
    await page.getByRole("table", { name: "Mailboxes" }).getByRole("button", { name: "Disable" }).click();
    await page.getByRole("table", { name: "Mailboxes" }).getByText("disabled", { exact: true }).waitFor();
    expect((await f.app.call("GET", `${base}/mailboxes/${box.id}`, { token })).body.status).toBe("disabled");

    expect(await cspViolations()).toEqual([]);
    expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
  });
}, T);
