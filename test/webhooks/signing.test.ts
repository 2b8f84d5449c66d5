import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import {
  asStandardSecret,
  deliveryHeaders,
  generateLegacySecret,
  generateSecret,
  legacySignature,
  secretKeyBytes,
  signatureHeader,
  signStandard,
  verifyLegacy,
  verifyStandard,
} from "../../src/kernel/webhooks/signing";

const nowSec = () => Math.floor(Date.now() / 1000);
const body = JSON.stringify({ id: "evt_0192", type: "entry.created", created_at: "2030-01-01T00:00:00.000Z", data: { email: "ada@example.com", name: "Ådá ✓" } });

/** Headers in the shape the standardwebhooks verifier expects. */
function svHeaders(h: Record<string, string>) {
  return { "webhook-id": h["webhook-id"]!, "webhook-timestamp": h["webhook-timestamp"]!, "webhook-signature": h["webhook-signature"]! };
}

describe("Standard Webhooks signatures", () => {
  test("reference vector from the Standard Webhooks spec", () => {
    const sig = signStandard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    expect(sig).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  test("a fresh secret has the whsec_ + base64(24 bytes) shape and is unique", () => {
    const a = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(secretKeyBytes(a).length).toBe(24);
    expect(generateSecret()).not.toBe(a);
  });

  test("the standardwebhooks package verifies a delivery signed with a fresh secret", () => {
    const secret = generateSecret();
    const h = deliveryHeaders({ msgId: "evt_abc", timestampSec: nowSec(), body, secrets: [secret] });
    expect(new Webhook(secret).verify(body, svHeaders(h))).toEqual(JSON.parse(body));
    expect(h["content-type"]).toBe("application/json");
    expect(h["user-agent"]).toBe("Bunker-Webhooks/1.0");
    expect(h["webhook-id"]).toBe("evt_abc");
    expect(Object.keys(h).some((k) => k.startsWith("x-"))).toBe(false);
  });

  test("a tampered body, id or timestamp fails verification", () => {
    const secret = generateSecret();
    const ts = nowSec();
    const h = svHeaders(deliveryHeaders({ msgId: "evt_abc", timestampSec: ts, body, secrets: [secret] }));
    const wh = new Webhook(secret);
    expect(() => wh.verify(body.replace("ada@", "eve@"), h)).toThrow();
    expect(() => wh.verify(body + " ", h)).toThrow();
    expect(() => wh.verify(body, { ...h, "webhook-id": "evt_abd" })).toThrow();
    expect(() => wh.verify(body, { ...h, "webhook-timestamp": String(ts - 1) })).toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, h)).toThrow();
  });

  test("during a rotation both signatures are sent and each secret alone verifies", () => {
    const current = generateSecret();
    const previous = generateSecret();
    const h = deliveryHeaders({ msgId: "evt_rot", timestampSec: nowSec(), body, secrets: [current, previous] });
    const parts = h["webhook-signature"]!.split(" ");
    expect(parts.length).toBe(2);
    expect(parts[0]).toBe(signStandard(current, "evt_rot", Number(h["webhook-timestamp"]), body));
    expect(parts[1]).toBe(signStandard(previous, "evt_rot", Number(h["webhook-timestamp"]), body));
    expect(new Webhook(current).verify(body, svHeaders(h))).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, svHeaders(h))).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateSecret()).verify(body, svHeaders(h))).toThrow();
  });

  test("signatureHeader refuses an empty secret list", () => {
    expect(() => signatureHeader([], "evt_x", nowSec(), body)).toThrow();
  });

  test("timestamps must be whole seconds (milliseconds are refused)", () => {
    const s = generateSecret();
    expect(() => signStandard(s, "evt_x", Date.now(), body)).toThrow();
    expect(() => signStandard(s, "evt_x", 1.5, body)).toThrow();
    expect(() => legacySignature("abc", Date.now(), body)).toThrow();
  });

  test("verifyStandard accepts any matching secret and checks the tolerance", () => {
    const cur = generateSecret();
    const old = generateSecret();
    const ts = 1_900_000_000;
    const signature = signatureHeader([cur, old], "evt_v", ts, body);
    expect(verifyStandard([old], { msgId: "evt_v", timestampSec: ts, signature }, body, ts + 10)).toBe(true);
    expect(verifyStandard([cur], { msgId: "evt_v", timestampSec: ts, signature }, body, ts - 300)).toBe(true);
    expect(verifyStandard([cur], { msgId: "evt_v", timestampSec: ts, signature }, body, ts + 301)).toBe(false);
    expect(verifyStandard([cur], { msgId: "evt_v", timestampSec: ts, signature }, body + "x", ts)).toBe(false);
    expect(verifyStandard([generateSecret()], { msgId: "evt_v", timestampSec: ts, signature }, body, ts)).toBe(false);
  });
});

describe("legacy (pre-move) secrets", () => {
  test("a legacy secret is a plain random string, not whsec_", () => {
    const s = generateLegacySecret();
    expect(s).toMatch(/^[0-9a-f]{32}$/);
    expect(generateLegacySecret()).not.toBe(s);
    expect(Buffer.from(secretKeyBytes(s)).toString("utf8")).toBe(s);
  });

  test("asStandardSecret: identity for whsec_, whsec_ + base64(stored) for legacy", () => {
    const s = generateSecret();
    expect(asStandardSecret(s)).toBe(s);
    expect(asStandardSecret("legacy-secret-123")).toBe("whsec_" + Buffer.from("legacy-secret-123").toString("base64"));
  });

  test("a pre-move secret verifies with the open-scheme verifier as whsec_ + base64(stored)", () => {
    const stored = generateLegacySecret();
    const h = deliveryHeaders({ msgId: "evt_leg", timestampSec: nowSec(), body, secrets: [stored], legacy: { header: "x-svc-signature", secret: stored } });
    const verifier = new Webhook("whsec_" + Buffer.from(stored, "utf8").toString("base64"));
    expect(verifier.verify(body, svHeaders(h))).toEqual(JSON.parse(body));
    expect(new Webhook(asStandardSecret(stored)).verify(body, svHeaders(h))).toEqual(JSON.parse(body));
    expect(() => verifier.verify(body.replace("ada", "eve"), svHeaders(h))).toThrow();
  });

  test("legacy header matches an independent HMAC keyed by the secret string as stored", () => {
    const stored = generateLegacySecret();
    const ts = nowSec();
    const h = deliveryHeaders({ msgId: "evt_leg", timestampSec: ts, body, secrets: [stored], legacy: { header: "X-Tack-Signature", secret: stored } });
    const hex = createHmac("sha256", stored).update(`${ts}.${body}`).digest("hex");
    expect(h["x-tack-signature"]).toBe(`t=${ts},v1=${hex}`);
    expect(h["X-Tack-Signature"]).toBeUndefined();
    expect(legacySignature(stored, ts, body)).toBe(`t=${ts},v1=${hex}`);
    // tampered body gives a different MAC
    const tampered = createHmac("sha256", stored).update(`${ts}.${body}x`).digest("hex");
    expect(h["x-tack-signature"]).not.toBe(`t=${ts},v1=${tampered}`);
  });

  test("verifyLegacy: constant-time check, tolerance, tampering", () => {
    const stored = "s3cr3t-as-stored";
    const ts = 1_900_000_000;
    const v = legacySignature(stored, ts, body);
    expect(verifyLegacy(stored, v, body, ts + 299)).toBe(true);
    expect(verifyLegacy(stored, v, body + " ", ts)).toBe(false);
    expect(verifyLegacy("other", v, body, ts)).toBe(false);
    expect(verifyLegacy(stored, v, body, ts + 301)).toBe(false);
    expect(verifyLegacy(stored, "t=abc,v1=zz", body, ts)).toBe(false);
  });

  test("no legacy header for endpoints without one", () => {
    const s = generateSecret();
    const h = deliveryHeaders({ msgId: "evt_n", timestampSec: nowSec(), body, secrets: [s], legacy: null });
    expect(Object.keys(h).sort()).toEqual(["content-type", "user-agent", "webhook-id", "webhook-signature", "webhook-timestamp"]);
  });
});
