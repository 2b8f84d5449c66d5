/**
 * One signed HTTP attempt: signs the stored body now (current secret, plus the previous
 * one during a rotation grace period, plus the legacy header for endpoints created through
 * the old routes), POSTs it through the SSRF-guarded client and classifies the outcome.
 * Never throws; the engine decides what an outcome means for retries and endpoint health.
 */
import type { AppContext } from "../../context";
import { OutboundError } from "../../core/outbound-http";
import { deliveryHeaders } from "./signing";
import type * as store from "./store/deliveries";
import { RESPONSE_BODY_KEEP_BYTES, type AttemptResult } from "./types";

/** Legacy X-<Product>-Signature headers stop with the legacy routes' sunset. */
export const LEGACY_SUNSET_MS = Date.parse("2027-01-15T00:00:00Z");

export type Outcome = AttemptResult & { error: string | null };

const utf8 = new TextDecoder("utf-8", { fatal: false });

export class SignedSender {
  // Decrypted secrets by ciphertext: AES-GCM per delivery would dominate the hot path.
  private readonly secretCache = new Map<string, string>();

  constructor(
    private readonly ctx: AppContext,
    private readonly replyDeadlineMs: () => number,
    /** The product's X-<Product>-Signature header name (catalogue.ts), for legacy endpoints. */
    private readonly legacyHeaderOf: (product: string) => string | undefined,
  ) {}

  private secret(enc: string): string {
    let s = this.secretCache.get(enc);
    if (s === undefined) {
      s = this.ctx.secretBox.decrypt(enc);
      if (this.secretCache.size >= 10_000) this.secretCache.clear();
      this.secretCache.set(enc, s);
    }
    return s;
  }

  /** One signed POST of the stored body, signed now. Never throws. */
  async post(t: store.SendTarget, eventId: string, body: string): Promise<Outcome> {
    const nowMs = this.ctx.clock.nowMs();
    let headers: Record<string, string>;
    try {
      const current = this.secret(t.secret_enc);
      const secrets = [current];
      // The previous secret signs too until its grace period ends: receivers that still
      // verify with it keep accepting (they accept if any signature matches).
      if (t.prev_secret_enc && t.prev_secret_expires_ms !== null && t.prev_secret_expires_ms > nowMs) secrets.push(this.secret(t.prev_secret_enc));
      const legacyHeader = t.legacy === 1 ? this.legacyHeaderOf(t.product) : undefined;
      headers = deliveryHeaders({
        msgId: eventId,
        timestampSec: Math.floor(nowMs / 1000),
        body,
        secrets,
        legacy: t.legacy === 1 && legacyHeader && nowMs < LEGACY_SUNSET_MS ? { header: legacyHeader, secret: current } : null,
      });
    } catch (e) {
      // Undecryptable secret (e.g. a different master key): not the receiver's fault, but
      // nothing can be signed; it is logged and retried like any failure.
      const message = `cannot sign: ${(e as Error).message}`;
      this.ctx.log.error("webhook signing failed", { endpoint: t.id, error: message });
      return { succeeded: false, status_code: null, latency_ms: 0, error_class: "internal", response_body: null, error: message };
    }
    // Latency is a measurement of real elapsed time, not domain time: performance.now().
    const started = performance.now();
    try {
      const res = await this.ctx.outbound.request(t.url, { method: "POST", headers, body, timeoutMs: this.replyDeadlineMs() });
      const latency_ms = Math.round(performance.now() - started);
      const response_body = utf8.decode(res.body.subarray(0, RESPONSE_BODY_KEEP_BYTES));
      if (res.status >= 200 && res.status < 300) return { succeeded: true, status_code: res.status, latency_ms, error_class: null, response_body, error: null };
      // A 3xx is never followed (the target would skip the SSRF check): a failure.
      const redirect = res.status >= 300 && res.status < 400;
      return {
        succeeded: false,
        status_code: res.status,
        latency_ms,
        error_class: redirect ? "redirect" : "http_status",
        response_body,
        error: redirect ? `redirect (${res.status}) not followed` : `HTTP ${res.status}`,
      };
    } catch (e) {
      const latency_ms = Math.round(performance.now() - started);
      const kind = e instanceof OutboundError ? e.kind : "connection";
      return { succeeded: false, status_code: null, latency_ms, error_class: kind, response_body: null, error: (e as Error).message };
    }
  }
}
