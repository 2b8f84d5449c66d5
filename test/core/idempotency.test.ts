import { describe, expect, test } from "bun:test";
import { HOUR, ManualClock } from "../../src/core/clock";
import { ApiError, conflict, tooMany } from "../../src/core/errors";
import { fingerprint, Idempotency, IDEMPOTENCY_LEASE_MS, type ExecResult } from "../../src/core/idempotency";
import { freshDb } from "../helpers/db";

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

async function setup() {
  const { db } = await freshDb();
  const clock = new ManualClock(T0);
  return { db, clock, idem: new Idempotency(db, clock) };
}

/** An exec that counts its calls and returns what it is given. */
function counted(result: ExecResult | (() => ExecResult)) {
  const fn = async () => {
    fn.calls++;
    return typeof result === "function" ? result() : result;
  };
  fn.calls = 0;
  return fn;
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function apiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("expected an ApiError");
}

const body = { name: "Acme", plan: { tier: "pro", seats: 5 } };
const fp = fingerprint("POST", "/platform/v1/workspaces", body);
const created: ExecResult = { status: 201, body: { id: "ws_1", ...body }, headers: { location: "/platform/v1/workspaces/ws_1" } };

describe("replay", () => {
  test("returns the stored status, body and headers, marked, without running exec again", async () => {
    const { idem } = await setup();
    const exec = counted(created);
    const first = await idem.run({ scope: "usr_1", key: "key-1", fingerprint: fp, exec });
    expect(first).toEqual({ status: 201, body: created.body, headers: created.headers!, replayed: false });

    const again = await idem.run({ scope: "usr_1", key: "key-1", fingerprint: fp, exec });
    expect(again).toEqual({
      status: 201,
      body: created.body,
      headers: { location: "/platform/v1/workspaces/ws_1", "idempotent-replay": "true" },
      replayed: true,
    });
    expect(exec.calls).toBe(1);
  });

  test("a new instance over the same database replays too", async () => {
    const { db, clock, idem } = await setup();
    await idem.run({ scope: "usr_1", key: "key-1", fingerprint: fp, exec: counted(created) });
    const exec = counted(created);
    const r = await new Idempotency(db, clock).run({ scope: "usr_1", key: "key-1", fingerprint: fp, exec });
    expect(r.replayed).toBe(true);
    expect(r.body).toEqual(created.body);
    expect(exec.calls).toBe(0);
  });

  test("an empty body (204) replays as no body", async () => {
    const { idem } = await setup();
    const exec = counted({ status: 204, body: undefined });
    await idem.run({ scope: "s", key: "k", fingerprint: fp, exec });
    expect(await idem.run({ scope: "s", key: "k", fingerprint: fp, exec })).toEqual({
      status: 204,
      body: undefined,
      headers: { "idempotent-replay": "true" },
      replayed: true,
    });
    expect(exec.calls).toBe(1);
  });

  test("a client error thrown by exec is stored and replayed as a result", async () => {
    const { idem } = await setup();
    let calls = 0;
    const exec = async (): Promise<ExecResult> => {
      calls++;
      throw conflict("Slug already taken", "SLUG_TAKEN");
    };
    const expected = { status: 409, body: { error: { code: "SLUG_TAKEN", message: "Slug already taken" } }, headers: {} };
    expect(await idem.run({ scope: "s", key: "k", fingerprint: fp, exec })).toEqual({ ...expected, replayed: false });
    expect(await idem.run({ scope: "s", key: "k", fingerprint: fp, exec })).toEqual({
      ...expected,
      headers: { "idempotent-replay": "true" },
      replayed: true,
    });
    expect(calls).toBe(1);
  });
});

describe("misuse", () => {
  test("the same key with a different request is 409 IDEMPOTENCY_KEY_REUSE", async () => {
    const { idem } = await setup();
    const exec = counted(created);
    await idem.run({ scope: "s", key: "k", fingerprint: fp, exec });
    for (const other of [
      fingerprint("POST", "/platform/v1/workspaces", { ...body, name: "Other" }),
      fingerprint("POST", "/platform/v1/projects", body),
      fingerprint("PUT", "/platform/v1/workspaces", body),
    ]) {
      const err = await apiError(idem.run({ scope: "s", key: "k", fingerprint: other, exec }));
      expect(err.status).toBe(409);
      expect(err.code).toBe("IDEMPOTENCY_KEY_REUSE");
    }
    expect(exec.calls).toBe(1);
  });

  test("malformed keys are 400 VALIDATION_ERROR on Idempotency-Key, and exec never runs", async () => {
    const { idem } = await setup();
    const exec = counted(created);
    for (const key of ["", "k".repeat(257), "has space", "slash/no", "ünï", "dot.no"]) {
      const err = await apiError(idem.run({ scope: "s", key, fingerprint: fp, exec }));
      expect(err.status).toBe(400);
      expect(err.code).toBe("VALIDATION_ERROR");
      expect(err.details).toEqual([{ field: "Idempotency-Key", reason: expect.any(String) }]);
    }
    expect(exec.calls).toBe(0);
  });

  test("256 characters and every allowed character are accepted", async () => {
    const { idem } = await setup();
    const exec = counted(created);
    for (const key of ["k".repeat(256), "A", "aZ09_:-"]) {
      expect((await idem.run({ scope: "s", key, fingerprint: fp, exec })).status).toBe(201);
    }
    expect(exec.calls).toBe(3);
  });
});

describe("concurrency", () => {
  test("a duplicate while the first is in flight is 409 IDEMPOTENCY_KEY_IN_USE; exec runs once", async () => {
    const { idem } = await setup();
    const gate = deferred<void>();
    const running = deferred<void>();
    let calls = 0;
    const exec = async () => {
      calls++;
      running.resolve();
      await gate.promise;
      return created;
    };
    const first = idem.run({ scope: "s", key: "k", fingerprint: fp, exec });
    await running.promise; // the first has claimed the key and is executing
    const err = await apiError(idem.run({ scope: "s", key: "k", fingerprint: fp, exec }));
    expect(err.status).toBe(409);
    expect(err.code).toBe("IDEMPOTENCY_KEY_IN_USE");

    gate.resolve();
    expect((await first).replayed).toBe(false);
    expect((await idem.run({ scope: "s", key: "k", fingerprint: fp, exec })).replayed).toBe(true);
    expect(calls).toBe(1);
  });

  test("a claim abandoned by a crash is taken over once its lease has run out", async () => {
    const { idem, clock } = await setup();
    const never = deferred<ExecResult>(); // the "crashed" request never finishes... until it does, late
    const running = deferred<void>();
    const stuck = idem.run({ scope: "s", key: "k", fingerprint: fp, exec: () => (running.resolve(), never.promise) });
    await running.promise; // claimed (the claim is async now): its lease counts from here

    clock.advance(IDEMPOTENCY_LEASE_MS - 1);
    expect((await apiError(idem.run({ scope: "s", key: "k", fingerprint: fp, exec: counted(created) }))).code).toBe("IDEMPOTENCY_KEY_IN_USE");

    clock.advance(1);
    const exec = counted(created);
    expect((await idem.run({ scope: "s", key: "k", fingerprint: fp, exec })).replayed).toBe(false);
    expect(exec.calls).toBe(1);

    // The original finishing late must not overwrite the result that now stands.
    never.resolve({ status: 201, body: { id: "ws_late" } });
    expect((await stuck).body).toEqual({ id: "ws_late" });
    const r = await idem.run({ scope: "s", key: "k", fingerprint: fp, exec });
    expect(r.replayed).toBe(true);
    expect(r.body).toEqual(created.body);
  });

  test("two requests with a new key at the same moment: one claims it and runs, the other is 409 IDEMPOTENCY_KEY_IN_USE", async () => {
    const { idem } = await setup();
    const gate = deferred<void>();
    let calls = 0;
    const exec = async () => {
      calls++;
      await gate.promise;
      return created;
    };
    // Neither is awaited before the other starts: on PostgreSQL both may find no row.
    const runs = [0, 1].map(() => idem.run({ scope: "s", key: "k", fingerprint: fp, exec }).then((r) => r, (e: unknown) => e));
    const deadline = Date.now() + 5000;
    while (calls === 0 && Date.now() < deadline) await Bun.sleep(5);
    await Bun.sleep(50); // time for a second claim to go through, if it (wrongly) could
    expect(calls).toBe(1);
    gate.resolve();
    const [a, b] = await Promise.all(runs);
    const refused = [a, b].filter((r) => r instanceof ApiError) as ApiError[];
    expect(refused.map((e) => e.code)).toEqual(["IDEMPOTENCY_KEY_IN_USE"]);
    expect([a, b].filter((r) => !(r instanceof ApiError))).toMatchObject([{ status: 201, replayed: false }]);
    expect((await idem.run({ scope: "s", key: "k", fingerprint: fp, exec })).replayed).toBe(true);
    expect(calls).toBe(1);
  });
});

describe("failures release the key", () => {
  test("a thrown non-ApiError is rethrown and the key can be retried", async () => {
    const { idem } = await setup();
    const boom = new Error("db down");
    await expect(idem.run({ scope: "s", key: "k", fingerprint: fp, exec: async () => Promise.reject(boom) })).rejects.toBe(boom);
    const exec = counted(created);
    expect(await idem.run({ scope: "s", key: "k", fingerprint: fp, exec })).toMatchObject({ status: 201, replayed: false });
    expect(exec.calls).toBe(1);
  });

  test("a thrown 5xx ApiError is rethrown and the key can be retried", async () => {
    const { idem } = await setup();
    const err = new ApiError(503, "UPSTREAM_UNAVAILABLE", "try later");
    await expect(idem.run({ scope: "s", key: "k", fingerprint: fp, exec: async () => Promise.reject(err) })).rejects.toBe(err);
    expect((await idem.run({ scope: "s", key: "k", fingerprint: fp, exec: counted(created) })).replayed).toBe(false);
  });

  test("a returned 500 and a 429 are returned but not stored", async () => {
    const { idem } = await setup();
    const five = await idem.run({ scope: "s", key: "k", fingerprint: fp, exec: counted({ status: 500, body: { error: "x" } }) });
    expect(five).toEqual({ status: 500, body: { error: "x" }, headers: {}, replayed: false });
    const limited = await idem.run({ scope: "s", key: "k", fingerprint: fp, exec: async () => Promise.reject(tooMany("Slow down", 30)) });
    expect(limited).toMatchObject({ status: 429, headers: { "retry-after": "30" }, replayed: false });
    const exec = counted(created);
    expect((await idem.run({ scope: "s", key: "k", fingerprint: fp, exec })).status).toBe(201);
    expect(exec.calls).toBe(1);
  });
});

describe("lifetime and scope", () => {
  test("records last exactly 24 h; after that the key is free, even for another request", async () => {
    const { idem, clock } = await setup();
    await idem.run({ scope: "s", key: "k", fingerprint: fp, exec: counted(created) });
    clock.advance(24 * HOUR - 1);
    expect((await idem.run({ scope: "s", key: "k", fingerprint: fp, exec: counted(created) })).replayed).toBe(true);
    clock.advance(1);
    const other = fingerprint("POST", "/platform/v1/workspaces", { name: "New" });
    const exec = counted({ status: 201, body: { id: "ws_2" } });
    expect(await idem.run({ scope: "s", key: "k", fingerprint: other, exec })).toMatchObject({ body: { id: "ws_2" }, replayed: false });
    expect(exec.calls).toBe(1);
    expect((await idem.run({ scope: "s", key: "k", fingerprint: other, exec })).body).toEqual({ id: "ws_2" });
  });

  test("keys are per scope", async () => {
    const { idem } = await setup();
    const a = counted({ status: 201, body: { id: "a" } });
    const b = counted({ status: 201, body: { id: "b" } });
    await idem.run({ scope: "usr_a", key: "k", fingerprint: fp, exec: a });
    // Another caller may use the same key for a different request.
    const otherFp = fingerprint("POST", "/x", {});
    expect(await idem.run({ scope: "usr_b", key: "k", fingerprint: otherFp, exec: b })).toMatchObject({ body: { id: "b" }, replayed: false });
    expect((await idem.run({ scope: "usr_a", key: "k", fingerprint: fp, exec: a })).body).toEqual({ id: "a" });
    expect([a.calls, b.calls]).toEqual([1, 1]);
  });

  test("without a key exec just runs, every time, and client errors come back as results", async () => {
    const { idem } = await setup();
    const exec = counted(created);
    for (const key of [null, undefined]) expect(await idem.run({ scope: "s", key, fingerprint: fp, exec })).toEqual({ ...created, headers: created.headers!, replayed: false });
    expect(exec.calls).toBe(2);
    const r = await idem.run({ scope: "s", key: null, fingerprint: fp, exec: async () => Promise.reject(conflict("nope")) });
    expect(r).toMatchObject({ status: 409, body: { error: { code: "CONFLICT" } }, replayed: false });
  });

  test("purgeExpired deletes records once they are 24 h old", async () => {
    const { idem, clock } = await setup();
    await idem.run({ scope: "s", key: "old", fingerprint: fp, exec: counted(created) });
    clock.advance(HOUR);
    await idem.run({ scope: "s", key: "new", fingerprint: fp, exec: counted(created) });
    expect(await idem.purgeExpired()).toBe(0);
    clock.advance(23 * HOUR);
    expect(await idem.purgeExpired()).toBe(1);
    expect((await idem.run({ scope: "s", key: "new", fingerprint: fp, exec: counted(created) })).replayed).toBe(true);
    clock.advance(HOUR - 1);
    expect(await idem.purgeExpired()).toBe(0);
    clock.advance(1); // "new" is now exactly 24 h old
    expect(await idem.purgeExpired()).toBe(1);
  });
});

describe("fingerprint", () => {
  test("canonical: key order and method case don't matter; everything else does", () => {
    const base = fingerprint("POST", "/p", { a: 1, b: { c: [1, 2], d: null } });
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint("post", "/p", { b: { d: null, c: [1, 2] }, a: 1 })).toBe(base);
    expect(fingerprint("POST", "/p", { a: 1, b: { c: [2, 1], d: null } })).not.toBe(base);
    expect(fingerprint("POST", "/p", { a: "1", b: { c: [1, 2], d: null } })).not.toBe(base);
    expect(fingerprint("POST", "/p?x=1", { a: 1, b: { c: [1, 2], d: null } })).not.toBe(base);
    expect(fingerprint("POST", "/p", undefined)).not.toBe(fingerprint("POST", "/p", null));
  });
});
