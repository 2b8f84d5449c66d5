/** TOTP codes as an authenticator app computes them, with the independent otpauth library. */
import * as OTPAuth from "otpauth";
import type { TestApp } from "./app";
import { ON_BINARY } from "./binary";

export const totp = (secret: string, atMs: number) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: atMs });

/**
 * The app's time for a run of TOTP codes. The server takes the previous, current and next
 * 30 s step, each once and in order; on the real clock (the binary) this waits out the last
 * 2 s of a step so that the codes computed next stay in the server's window.
 */
export async function totpTime(app: TestApp): Promise<number> {
  if (ON_BINARY) {
    const left = 30_000 - (Date.now() % 30_000);
    if (left < 2_000) await Bun.sleep(left + 100);
  }
  return app.clock.nowMs();
}
