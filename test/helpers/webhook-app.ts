/**
 * A test app that may deliver to loopback, plus a real receiver. Deliveries run when a test
 * pumps them (dispatchPending / deliverDue), not in the background. On `npm run test:bin`
 * the binary's own scheduler delivers them (there is no engine to pump): wait for the receiver.
 */
import { startTestApp, type TestApp } from "./app";
import { ON_BINARY } from "./binary";
import { startReceiver, type Receiver } from "./http-receiver";

export async function startWebhookTestApp(env: Record<string, string> = {}): Promise<{ app: TestApp; receiver: Receiver }> {
  const app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true", ...env });
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
  return { app, receiver: startReceiver() };
}

export async function stopWebhookTestApp(t: { app: TestApp; receiver: Receiver }) {
  await t.app?.stop();
  await t.receiver?.stop();
}
