/**
 * Waiting for background work with a deadline (never a fixed sleep): on `npm run test:bin`
 * deliveries, mail and jobs are the process's own scheduler's to run, so a test polls what a
 * user would see until it is there.
 */
import { setSystemTime } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { TestApp } from "./app";
import type { ReceivedRequest } from "./http-receiver";

/** Polls `fn` every 50 ms until it returns a truthy value, which it resolves with; throws after `timeoutMs`. */
export async function until<V>(what: string, fn: () => V | Promise<V>, timeoutMs = 20_000): Promise<NonNullable<Awaited<V>>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<Awaited<V>>;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

/**
 * A delivery verified with the independent Standard Webhooks library, at the app's time:
 * the injected clock in-process (frozen, so the library's tolerance window is the app's), the
 * real clock on the binary.
 */
export function verifyDelivery(app: TestApp, secret: string, req: ReceivedRequest): any {
  setSystemTime(new Date(app.clock.nowMs()));
  try {
    return new Webhook(secret).verify(req.body, { "webhook-id": req.headers["webhook-id"]!, "webhook-timestamp": req.headers["webhook-timestamp"]!, "webhook-signature": req.headers["webhook-signature"]! });
  } finally {
    setSystemTime();
  }
}
