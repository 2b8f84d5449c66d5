/**
 * Deeply nested JSON is a 400, never a 500 (issue 21 §2): the depth is checked on the raw
 * text before JSON.parse, validation and the idempotency fingerprint, which all recurse.
 * Very wide JSON is refused the same way, before a failed validation prints all of it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fingerprint } from "../../src/core/idempotency";
import { jsonLimitExceeded, MAX_JSON_DEPTH, MAX_JSON_ITEMS } from "../../src/core/json-limits";
import { ownerWithKey, type TestApp } from "../helpers/app";
import { startReceiver, type Receiver } from "../helpers/http-receiver";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";

const exceedsJsonDepth = (text: string, max = MAX_JSON_DEPTH) => jsonLimitExceeded(text, max, Number.MAX_SAFE_INTEGER) === "depth";
const nestedArrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const nestedObjects = (depth: number) => '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);

describe("jsonLimitExceeded: depth", () => {
  test("counts arrays and objects alike; the limit is inclusive", () => {
    expect(exceedsJsonDepth(nestedArrays(MAX_JSON_DEPTH))).toBe(false);
    expect(exceedsJsonDepth(nestedArrays(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(exceedsJsonDepth(nestedObjects(MAX_JSON_DEPTH))).toBe(false);
    expect(exceedsJsonDepth(nestedObjects(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(exceedsJsonDepth('[{"a":[1,{"b":[]}]},[[]]]', 5)).toBe(false);
    expect(exceedsJsonDepth('[{"a":[1,{"b":[[]]}]},[[]]]', 5)).toBe(true);
  });

  test("brackets inside strings, escaped quotes included, do not count", () => {
    expect(exceedsJsonDepth(JSON.stringify({ s: "[".repeat(1000) }), 1)).toBe(false);
    expect(exceedsJsonDepth(JSON.stringify({ s: 'x\\"[[[[' }), 1)).toBe(false);
    expect(exceedsJsonDepth(`{"s":"\\\\"}` + nestedArrays(2), 1)).toBe(true);
  });

  test("runs of backslashes before a quote: odd escapes it, even ends the string; an unterminated string hides the rest", () => {
    for (let run = 0; run <= 5; run++) {
      const text = `{"s":"x${"\\".repeat(run)}"[[]]` + '"' + "}";
      // Even run: the string ends at the first quote, so [[ ]] nest inside the object (depth 3).
      expect(exceedsJsonDepth(text, 2)).toBe(run % 2 === 0);
    }
    expect(jsonLimitExceeded('{"s":"[[[[[[', 1, 10)).toBeNull();
  });

  test("agrees with a character-by-character reference on random texts", () => {
    const reference = (text: string, maxDepth: number, maxItems: number) => {
      let depth = 0;
      let items = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === '"') {
          for (i++; i < text.length; i++) {
            if (text[i] === "\\") i++;
            else if (text[i] === '"') break;
          }
        } else if (c === ",") {
          if (++items > maxItems) return "items";
        } else if (c === "[" || c === "{") {
          if (++depth > maxDepth) return "depth";
          if (++items > maxItems) return "items";
        } else if (c === "]" || c === "}") depth--;
      }
      return null;
    };
    const alphabet = ['"', "\\", "[", "]", "{", "}", ",", "a"];
    let seed = 0x2545f491; // xorshift32: deterministic, well spread in the low bits
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return seed >>> 0;
    };
    for (let n = 0; n < 5000; n++) {
      const text = Array.from({ length: next() % 60 }, () => alphabet[next() % alphabet.length]).join("");
      for (const [d, w] of [[1, 2], [2, 3], [3, 6]] as const) expect(jsonLimitExceeded(text, d, w)).toBe(reference(text, d, w));
    }
  });

  // A recursive scan would overflow the stack here long before 1 MiB; how fast the one pass
  // is belongs to the benches (a timed assertion fails on a loaded machine, not on a slow scan).
  test("one pass over 1 MiB of brackets needs no stack", () => {
    expect(exceedsJsonDepth("{".repeat(1 << 20), Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  test("items: array elements plus object members, at most MAX_JSON_ITEMS, commas in strings ignored", () => {
    const array = (n: number) => `[${Array(n).fill("0").join(",")}]`;
    expect(jsonLimitExceeded(array(MAX_JSON_ITEMS))).toBeNull();
    expect(jsonLimitExceeded(array(MAX_JSON_ITEMS + 1))).toBe("items");
    // One member holding MAX_JSON_ITEMS elements is one item too many.
    expect(jsonLimitExceeded(`{"a":${array(MAX_JSON_ITEMS - 1)}}`)).toBeNull();
    expect(jsonLimitExceeded(`{"a":${array(MAX_JSON_ITEMS)}}`)).toBe("items");
    expect(jsonLimitExceeded(JSON.stringify({ s: ",".repeat(50_000) }))).toBeNull();
  });

  test("the idempotency fingerprint of a body at the limit works (the kernel stops deeper ones)", () => {
    expect(fingerprint("POST", "/x", JSON.parse(nestedObjects(MAX_JSON_DEPTH)))).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("routes answer 400 VALIDATION_ERROR for 100,000 nested arrays", () => {
  let t: { app: TestApp; receiver: Receiver };
  let owner: Awaited<ReturnType<typeof ownerWithKey>>;
  let community: { id: string };
  let hook: { id: string };
  beforeAll(async () => {
    t = await startWebhookTestApp();
    owner = await ownerWithKey(t.app);
    community = (await t.app.call("POST", `/social/v1/workspaces/${owner.ws.id}/communities`, { token: owner.token, body: { slug: "deep", display_name: "Deep" } })).body;
    hook = (await t.app.call("POST", `/social/v1/communities/${community.id}/webhooks`, { token: owner.token, body: { url: `${t.receiver.url}/h` } })).body;
    expect(hook.id).toBeTruthy();
  });
  afterAll(() => stopWebhookTestApp(t));

  const deep = nestedArrays(100_000);
  const cases = () => [
    { path: `/platform/v1/workspaces/${owner.ws.slug}/roles`, body: deep },
    { path: `/platform/v1/workspaces/${owner.ws.slug}/roles`, body: `{"name":"deep","policy":${deep}}` },
    { path: `/social/v1/communities/${community.id}/webhooks/${hook.id}/test`, body: deep },
    { path: `/social/v1/communities/${community.id}/webhooks/${hook.id}/rotate-secret`, body: `{"x":${deep}}` },
    { path: `/social/v1/communities/${community.id}/webhooks/${hook.id}/deliveries/dlv_nope/redeliver`, body: deep },
  ];

  test("role create and the community webhook test, rotate-secret and redeliver routes", async () => {
    for (const c of cases()) {
      const r = await t.app.call("POST", c.path, { token: owner.token, body: c.body, headers: { "content-type": "application/json", "idempotency-key": `deep-${crypto.randomUUID()}` } });
      expect([c.path, r.status]).toEqual([c.path, 400]);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.details).toEqual([{ field: "body", reason: `nested deeper than ${MAX_JSON_DEPTH} levels` }]);
      expect(r.headers.get("x-request-id")).toBeTruthy();
    }
  });

  test("half a million array elements are refused at once, before validation formats them", async () => {
    const wide = `{"name":"wide","policy":[${Array(500_000).fill("0").join(",")}]}`;
    const r = await t.app.call("POST", `/platform/v1/workspaces/${owner.ws.slug}/roles`, { token: owner.token, body: wide, headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    // The one detail is the item count's (validation would list an error per element).
    expect(r.body.error.details).toEqual([{ field: "body", reason: `more than ${MAX_JSON_ITEMS} array elements and object members` }]);
  });

  test("at the limit the body is parsed and judged by the route as usual", async () => {
    const atLimit = `{"name":"deep","policy":${nestedArrays(MAX_JSON_DEPTH - 1)}}`;
    const r = await t.app.call("POST", `/platform/v1/workspaces/${owner.ws.slug}/roles`, { token: owner.token, body: atLimit, headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expect(r.body.error.details).not.toEqual([{ field: "body", reason: `nested deeper than ${MAX_JSON_DEPTH} levels` }]);
  });
});
