/**
 * Console journey, webhooks: an endpoint on a loopback receiver (secret shown once, then
 * checked against the signature of the test delivery), pause and resume, rotate with a
 * grace period, the event log with the attempt (status, latency, response excerpt) and a
 * replay that resends the same webhook-id; the Auth App scope beside the mail one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { journey, SIGNED_OUT, unexpected } from "../helpers/browser";
import { operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";
import { startReceiver, type Receiver } from "../helpers/http-receiver";

const T = 60_000;

/** The delivery carries a signature made with `secret` (the app's clock is the test's, so the timestamp is checked as sent). */
function signedWith(secret: string, d: { body: string; headers: Record<string, string> }): boolean {
  const sent = new Date(Number(d.headers["webhook-timestamp"]) * 1000);
  return d.headers["webhook-signature"]!.split(" ").includes(new Webhook(secret).sign(d.headers["webhook-id"]!, sent, d.body));
}
let f: ConsoleFixture;
let receiver: Receiver;
beforeAll(async () => {
  receiver = startReceiver(() => new Response("thanks from the receiver", { status: 200 }));
  f = await startConsole({ ALLOW_PRIVATE_TARGETS: "true" });
}, T);
afterAll(async () => {
  await f?.stop();
  await receiver?.stop();
});

test("console: webhook endpoints, test, pause, rotate, event log, replay", async () => {
  const { cp, page, token, ws } = await operatorInWorkspace(f);
  await journey(cp, "webhooks", async () => {
    const base = `/mail/v1/workspaces/${ws.id}/webhooks`;

    await screen(page, "Webhooks", "Endpoints");
    await page.getByLabel("URL").fill(`${receiver.url}/hook`);
    await page.getByLabel("Description").fill("CRM sync");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const once = page.getByRole("region", { name: "Signing secret" });
    await once.waitFor();
    const secret = (await once.locator("code").textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await once.getByRole("button", { name: "Done" }).click();
    const table = page.getByRole("table", { name: "Endpoints" });
    await table.getByText(`${receiver.url}/hook`).waitFor();
    await cp.shot("webhook-endpoints");

    // Send test: the receiver gets a delivery signed with the secret shown once.
    await table.getByRole("button", { name: "Send test" }).click();
    const attempt = page.getByTestId("attempt");
    await attempt.waitFor();
    expect(await attempt.textContent()).toContain("HTTP 200");
    expect(await attempt.textContent()).toContain("thanks from the receiver");
    const [delivery] = await receiver.waitForRequests(1);
    expect(signedWith(secret, delivery!)).toBe(true);

    // Pause, then resume: the API follows.
    await table.getByRole("button", { name: "Pause" }).click();
    await table.getByText("paused").waitFor();
    const endpoints = await f.app.call("GET", `${base}/endpoints`, { token });
    expect(endpoints.body.data[0].enabled).toBe(false);
    await table.getByRole("button", { name: "Resume" }).click();
    await table.getByText("enabled").waitFor();

    // Rotate with a 24-hour grace period: the new secret is shown once.
    await table.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = page.getByRole("region", { name: /^New signing secret/ });
    await rotated.waitFor();
    const newSecret = (await rotated.locator("code").textContent())!;
    expect(newSecret).not.toBe(secret);
    const after = await f.app.call("GET", `${base}/endpoints`, { token });
    expect(after.body.data[0].previous_secret_expires_at).not.toBeNull();
    await rotated.getByRole("button", { name: "Done" }).click();

    // Event log: the test event with its attempt; replay resends the same webhook-id.
    await screen(page, "Webhooks", "Event log");
    const events = page.getByRole("table", { name: "Events" });
    await events.locator("tr", { hasText: "email.sent" }).press("Enter"); // rows open from the keyboard
    const attempts = page.getByRole("table", { name: "Attempts" });
    await attempts.getByText("200").first().waitFor();
    expect(await attempts.textContent()).toContain("thanks from the receiver");
    await cp.shot("webhook-event");
    await page.getByRole("button", { name: "Replay" }).click();
    await page.getByText(/Replayed to 1 endpoint\(s\): HTTP 200/).waitFor();
    const all = await receiver.waitForRequests(2);
    expect(all[1]!.headers["webhook-id"]).toBe(all[0]!.headers["webhook-id"]);
    expect(signedWith(newSecret, all[1]!)).toBe(true);
    expect(signedWith(secret, all[1]!)).toBe(true); // the old secret still signs during the grace period
    await attempts.getByText("replay").waitFor();

    // The Auth App scope: pick it, and the App's (empty) endpoint list shows.
    await f.app.call("POST", "/auth/v1/apps", { token, body: { workspace_id: ws.id, slug: "shop", display_name: "Shop" } });
    await screen(page, "Webhooks", "Endpoints");
    await page.getByLabel("Scope").selectOption("auth");
    await page.getByLabel("App", { exact: true }).waitFor();
    await page.getByRole("table", { name: "Endpoints" }).getByText("Nothing yet.").waitFor();

    expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
  });
}, T);
