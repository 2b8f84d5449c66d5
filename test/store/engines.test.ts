/**
 * The data layer's contract (src/core/store/sql.ts), run against both engines: the same
 * statements, the same results. PostgreSQL runs in a throwaway cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MIGRATIONS } from "../../src/app";
import { PostgresDb } from "../../src/core/store/postgres";
import { dialect, isUniqueViolation, lockKey, toPgPlaceholders, type Db } from "../../src/core/store/sql";
import { openExistingSqlite, SqliteDb } from "../../src/core/store/sqlite";
import { type PgCluster, startPgCluster } from "../helpers/pg-cluster";

let cluster: PgCluster;
const engines: Record<string, Db> = {};

beforeAll(async () => {
  cluster = await startPgCluster();
  engines.postgres = await PostgresDb.open(await cluster.createDatabase("engines"), { max: 4, migrations: MIGRATIONS });
  engines.sqlite = new SqliteDb(join(mkdtempSync(join(tmpdir(), "bunker-engines-")), "bunker.db"), MIGRATIONS);
  for (const db of Object.values(engines)) {
    await db.run("CREATE TABLE t_items (id TEXT PRIMARY KEY, n INTEGER NOT NULL, big BIGINT, note TEXT)");
  }
}, 60_000);

afterAll(async () => {
  for (const db of Object.values(engines)) await db.close();
  await cluster?.stop();
});

test("placeholders: ?, ?N and $name become $n; literals, comments and casts are left alone", () => {
  expect(toPgPlaceholders("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ? -- ?\n").text).toBe("SELECT * FROM t WHERE a = $1 AND b = '?' AND c = $2 -- ?\n");
  expect(toPgPlaceholders("SELECT ?2, ?1").text).toBe("SELECT $2, $1");
  expect(toPgPlaceholders("INSERT INTO t VALUES ($id, $n, $id, 'x$y', a::text)")).toEqual({ text: "INSERT INTO t VALUES ($1, $2, $1, 'x$y', a::text)", names: ["id", "n"] });
});

for (const name of ["sqlite", "postgres"]) {
  describe(name, () => {
    const db = () => engines[name]!;

    test("get, all and run with positional and named values; numbers come back as numbers", async () => {
      await db().run("DELETE FROM t_items");
      expect(await db().run("INSERT INTO t_items (id, n, big, note) VALUES (?, ?, ?, ?)", "a", 1, 1_780_000_000_123, null)).toBe(1);
      expect(await db().run("INSERT INTO t_items (id, n, big, note) VALUES ($id, $n, $big, $note)", { id: "b", n: 2, big: 5, note: "it's" })).toBe(1);
      expect(await db().get("SELECT id, n, big, note FROM t_items WHERE id = ?", "a")).toEqual({ id: "a", n: 1, big: 1_780_000_000_123, note: null });
      expect(await db().get("SELECT id FROM t_items WHERE id = ?", "zz")).toBeNull();
      expect(await db().all("SELECT id FROM t_items ORDER BY id")).toEqual([{ id: "a" }, { id: "b" }]);
      expect(await db().get("SELECT COUNT(*) AS c, SUM(n) AS s, MAX(n) > 1 AS flag FROM t_items")).toEqual({ c: 2, s: 3, flag: 1 });
      expect(await db().run("UPDATE t_items SET n = n + 1")).toBe(2);
      expect(await db().run("UPDATE t_items SET n = 0 WHERE id = 'none'")).toBe(0);
      expect(await db().get("INSERT INTO t_items (id, n) VALUES (?, ?) RETURNING id, n", "c", true)).toEqual({ id: "c", n: 1 });
    });

    test("a unique violation is recognisable on either engine; ON CONFLICT DO NOTHING is portable", async () => {
      await db().run("DELETE FROM t_items");
      await db().run("INSERT INTO t_items (id, n) VALUES ('u', 1)");
      const err = await db().run("INSERT INTO t_items (id, n) VALUES ('u', 2)").catch((e) => e);
      expect(isUniqueViolation(err)).toBe(true);
      expect(isUniqueViolation(new Error("other"))).toBe(false);
      expect(await db().run("INSERT INTO t_items (id, n) VALUES ('u', 3) ON CONFLICT (id) DO NOTHING")).toBe(0);
      expect(await db().run("INSERT INTO t_items (id, n) VALUES ('u', 4) ON CONFLICT (id) DO UPDATE SET n = excluded.n")).toBe(1);
      expect((await db().get<{ n: number }>("SELECT n FROM t_items WHERE id = 'u'"))!.n).toBe(4);
    });

    test("a transaction commits when its callback resolves and rolls back when it throws", async () => {
      await db().run("DELETE FROM t_items");
      const out = await db().tx(async (t) => {
        await t.run("INSERT INTO t_items (id, n) VALUES ('t1', 1)");
        return (await t.all("SELECT id FROM t_items")).length;
      });
      expect(out).toBe(1);
      const err = await db()
        .tx(async (t) => {
          await t.run("INSERT INTO t_items (id, n) VALUES ('t2', 1)");
          throw new Error("boom");
        })
        .catch((e) => e);
      expect(err.message).toBe("boom");
      expect(await db().all("SELECT id FROM t_items ORDER BY id")).toEqual([{ id: "t1" }]);
    });

    test("a nested tx is a savepoint: its failure undoes only its own writes", async () => {
      await db().run("DELETE FROM t_items");
      await db().tx(async (t) => {
        await t.run("INSERT INTO t_items (id, n) VALUES ('outer', 1)");
        await t.tx(async (s) => {
          await s.run("INSERT INTO t_items (id, n) VALUES ('inner-ok', 1)");
        });
        await t
          .tx(async (s) => {
            await s.run("INSERT INTO t_items (id, n) VALUES ('inner-bad', 1)");
            throw new Error("undo me");
          })
          .catch(() => {});
      });
      expect(await db().all("SELECT id FROM t_items ORDER BY id")).toEqual([{ id: "inner-ok" }, { id: "outer" }]);
    });

    test("the database handle refuses statements from inside its own open transaction", async () => {
      const err = await db()
        .tx(async () => {
          await db().get("SELECT 1 AS x");
        })
        .catch((e) => e);
      expect(String(err.message)).toContain("use the transaction's handle");
      // After the transaction ended, work it started may use the database handle again.
      let later: Promise<unknown> = Promise.resolve(null);
      const ended = Promise.withResolvers<void>();
      await db().tx(async () => {
        later = ended.promise.then(() => db().get("SELECT 1 AS x"));
      });
      ended.resolve();
      expect(await later).toEqual({ x: 1 });
    });

    test("concurrent read-modify-write transactions do not lose updates", async () => {
      await db().run("DELETE FROM t_items");
      await db().run("INSERT INTO t_items (id, n) VALUES ('ctr', 0)");
      const bump = () =>
        db().tx(async (t) => {
          const row = await t.get<{ n: number }>(`SELECT n FROM t_items WHERE id = 'ctr'${name === "postgres" ? " FOR UPDATE" : ""}`);
          await Bun.sleep(1); // awaits between statements: another transaction must not slip in
          await t.run("UPDATE t_items SET n = ? WHERE id = 'ctr'", row!.n + 1);
        });
      await Promise.all(Array.from({ length: 20 }, bump));
      expect((await db().get<{ n: number }>("SELECT n FROM t_items WHERE id = 'ctr'"))!.n).toBe(20);
    });

    test("reads outside the transaction do not see its uncommitted writes", async () => {
      await db().run("DELETE FROM t_items");
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const open = db().tx(async (t) => {
        await t.run("INSERT INTO t_items (id, n) VALUES ('pending', 1)");
        await gate;
      });
      await Bun.sleep(20);
      expect(await db().get("SELECT id FROM t_items WHERE id = 'pending'")).toBeNull();
      release();
      await open;
      expect(await db().get("SELECT id FROM t_items WHERE id = 'pending'")).toEqual({ id: "pending" });
    });

    test("notifications from a transaction go out on commit only", async () => {
      const got: string[] = [];
      const stop = await db().listen("bunker_test", (p) => got.push(p));
      await db().tx(async (t) => {
        await t.notify("bunker_test", "committed");
      });
      await db()
        .tx(async (t) => {
          await t.notify("bunker_test", "rolled-back");
          throw new Error("no");
        })
        .catch(() => {});
      await db().notify("bunker_test", "direct");
      for (let i = 0; i < 100 && got.length < 2; i++) await Bun.sleep(10);
      await Bun.sleep(50);
      expect(got).toEqual(["committed", "direct"]);
      await stop();
    });

    test("afterCommit runs after the commit only: not on rollback, not for a rolled-back savepoint", async () => {
      const ran: string[] = [];
      await db().tx(async (t) => {
        t.afterCommit(() => ran.push("outer"));
        await t.tx(async (s) => {
          s.afterCommit(() => ran.push("kept savepoint"));
        });
        await t
          .tx(async (s) => {
            s.afterCommit(() => ran.push("undone savepoint"));
            throw new Error("undo");
          })
          .catch(() => {});
        expect(ran).toEqual([]); // nothing before the commit
      });
      expect(ran).toEqual(["outer", "kept savepoint"]);
      await db()
        .tx(async (t) => {
          t.afterCommit(() => ran.push("rolled back"));
          throw new Error("no");
        })
        .catch(() => {});
      db().afterCommit(() => ran.push("no transaction: at once"));
      expect(ran).toEqual(["outer", "kept savepoint", "no transaction: at once"]);
    });

    test("beforeCommit: hooks run after the callback, in order, in the transaction; a rolled-back savepoint's are dropped; a failing one rolls back", async () => {
      await db().run("DELETE FROM t_items");
      const order: string[] = [];
      await db().tx(async (t) => {
        t.beforeCommit(async (h) => {
          order.push("hook 1");
          await h.run("INSERT INTO t_items (id, n, note) VALUES ('h1', 1, 'hook')");
        });
        await t.tx(async (s) => {
          s.beforeCommit(async (h) => void order.push("kept savepoint"));
        });
        await t
          .tx(async (s) => {
            s.beforeCommit(async () => void order.push("undone savepoint"));
            throw new Error("undo");
          })
          .catch(() => {});
        t.beforeCommit(async (h) => {
          // Sees the first hook's write and the callback's.
          order.push(`hook 2 sees ${(await h.all<{ id: string }>("SELECT id FROM t_items ORDER BY id")).map((r) => r.id).join(",")}`);
        });
        await t.run("INSERT INTO t_items (id, n, note) VALUES ('c1', 1, 'callback')");
        order.push("callback done");
      });
      expect(order).toEqual(["callback done", "hook 1", "kept savepoint", "hook 2 sees c1,h1"]);
      const failed = await db()
        .tx(async (t) => {
          await t.run("INSERT INTO t_items (id, n, note) VALUES ('c2', 1, 'callback')");
          t.beforeCommit(async () => {
            throw new Error("hook failed");
          });
        })
        .catch((e: Error) => e.message);
      expect(failed).toBe("hook failed");
      expect((await db().all<{ id: string }>("SELECT id FROM t_items ORDER BY id")).map((r) => r.id)).toEqual(["c1", "h1"]);
      expect(() => db().beforeCommit(async () => {})).toThrow("beforeCommit needs a transaction handle");
    });

    test("lockKey serialises check-then-write transactions: a cap of 5 holds under 20 concurrent inserts", async () => {
      await db().run("DELETE FROM t_items");
      const add = (i: number) =>
        db().tx(async (t) => {
          await lockKey(t, "cap:test");
          const { n } = (await t.get<{ n: number }>("SELECT COUNT(*) AS n FROM t_items WHERE note = 'capped'"))!;
          await Bun.sleep(1); // room for another transaction to slip between the count and the insert
          if (n >= 5) return false;
          await t.run("INSERT INTO t_items (id, n, note) VALUES (?, 0, 'capped')", `cap${i}`);
          return true;
        });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => add(i)));
      expect(results.filter(Boolean).length).toBe(5);
      expect((await db().get<{ n: number }>("SELECT COUNT(*) AS n FROM t_items WHERE note = 'capped'"))!.n).toBe(5);
    });

    test("claims with the dialect's row lock hand each row to one taker", async () => {
      await db().run("DELETE FROM t_items");
      for (let i = 0; i < 30; i++) await db().run("INSERT INTO t_items (id, n) VALUES (?, 0)", `job${String(i).padStart(2, "0")}`);
      const claim = (who: string) =>
        db().tx(async (t) => {
          const rows = await t.all<{ id: string }>(`SELECT id FROM t_items WHERE n = 0 ORDER BY id LIMIT 5${dialect(t).skipLocked}`);
          await Bun.sleep(2);
          for (const r of rows) await t.run("UPDATE t_items SET n = 1, note = ? WHERE id = ?", who, r.id);
          return rows.map((r) => r.id);
        });
      const taken = (await Promise.all(["a", "b", "c", "d", "e", "f"].map(claim))).flat();
      expect(new Set(taken).size).toBe(taken.length);
      expect(taken.length).toBe(30);
    });
  });
}

describe("sqlite group commit", () => {
  const sqlite = () => engines.sqlite as SqliteDb;
  /**
   * Runs a scenario of concurrent transactions in rounds until one round committed as a single
   * group, and returns that round's result. A group closes after a few milliseconds of running,
   * so a pause of the process (a loaded machine, a GC) may split a round into two groups.
   */
  const inOneGroup = async <T>(scenario: (round: number) => Promise<T>): Promise<T> => {
    for (let round = 0; ; round++) {
      const before = sqlite().commitStats.commits;
      const result = await scenario(round);
      if (sqlite().commitStats.commits - before === 1) return result;
      if (round === 9) throw new Error("ten rounds and never one group");
    }
  };
  const rows = async (note: string) => (await sqlite().all<{ id: string }>("SELECT id FROM t_items WHERE note = ? ORDER BY id", note)).map((r) => r.id);

  test("concurrent transactions share one commit; each caller is answered after it", async () => {
    const before = { ...sqlite().commitStats };
    const ids = Array.from({ length: 50 }, (_, i) => `g${String(i).padStart(2, "0")}`);
    await Promise.all(ids.map((id) => sqlite().tx((t) => t.run("INSERT INTO t_items (id, n, note) VALUES (?, 1, 'group')", id))));
    const commits = sqlite().commitStats.commits - before.commits;
    expect(sqlite().commitStats.transactions - before.transactions).toBe(50);
    expect(commits).toBeGreaterThanOrEqual(1);
    expect(commits).toBeLessThan(5);
    // Answered after the commit: a separate connection sees every row.
    const other = openExistingSqlite(sqlite().writer.filename)!;
    expect(other.query("SELECT COUNT(*) AS n FROM t_items WHERE note = 'group'").get()).toEqual({ n: 50 });
    other.close();
  });

  test("a transaction that throws rolls back alone: the others of its group commit, its notifications and callbacks are dropped", async () => {
    const got: string[] = [];
    const ran: string[] = [];
    const stop = await sqlite().listen("bunker_group", (p) => got.push(p));
    const write = (id: string, fail: boolean) =>
      sqlite().tx(async (t) => {
        await t.run("INSERT INTO t_items (id, n, note) VALUES (?, 1, 'mixed')", id);
        await t.notify("bunker_group", id);
        t.afterCommit(() => ran.push(id));
        if (fail) throw new Error(`fail ${id}`);
        return id;
      });
    const kept: string[] = [];
    const results = await inOneGroup((round) => {
      const id = (n: number) => `m${n}-${round}`;
      kept.push(id(1), id(3), id(5));
      return Promise.allSettled([write(id(1), false), write(id(2), true), write(id(3), false), write(id(4), true), write(id(5), false)]);
    });
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toMatch(/^fail m2-\d+$/);
    // Whatever the grouping of the rounds before, the failed ones left nothing behind.
    expect(await rows("mixed")).toEqual(kept.sort());
    expect(ran.sort()).toEqual(kept);
    expect(got.sort()).toEqual(kept);
    await stop();
  });

  test("a unique violation in one transaction of a group leaves the others' rows in place", async () => {
    await sqlite().run("INSERT INTO t_items (id, n, note) VALUES ('dup', 1, 'first')");
    const results = await Promise.allSettled(
      ["u1", "dup", "u2"].map((id) => sqlite().tx((t) => t.run("INSERT INTO t_items (id, n, note) VALUES (?, 1, 'unique')", id))),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(isUniqueViolation((results[1] as PromiseRejectedResult).reason)).toBe(true);
    expect(await rows("unique")).toEqual(["u1", "u2"]);
  });

  test("a transaction queued while a group runs joins that group", async () => {
    const ids = await inOneGroup(async (round) => {
      const [first, late] = [`q1-${round}`, `q2-${round}`];
      let reached!: () => void;
      const midway = new Promise<void>((resolve) => (reached = resolve));
      // The second handler reaches its write only once the first transaction is running
      // (a request whose body or credential check finished meanwhile).
      const second = midway.then(() => sqlite().tx((t) => t.run("INSERT INTO t_items (id, n, note) VALUES (?, 1, 'queued')", late)));
      const one = sqlite().tx(async (t) => {
        await t.run("INSERT INTO t_items (id, n, note) VALUES (?, 1, 'queued')", first);
        reached();
        await Promise.resolve();
      });
      await Promise.all([one, second]);
      return [first, late];
    });
    expect((await rows("queued")).filter((id) => ids.includes(id))).toEqual(ids);
  });

  test("lone writes outside a transaction join the group", async () => {
    const before = { ...sqlite().commitStats };
    await Promise.all(Array.from({ length: 20 }, (_, i) => sqlite().run("INSERT INTO t_items (id, n, note) VALUES (?, 1, 'lone')", `l${String(i).padStart(2, "0")}`)));
    expect(sqlite().commitStats.transactions - before.transactions).toBe(20);
    expect(sqlite().commitStats.commits - before.commits).toBeLessThan(5);
    expect((await rows("lone")).length).toBe(20);
  });

  test("before-commit hooks of a group run once all its transactions ran, in their order; a failed transaction's are dropped", async () => {
    const hooked: string[] = [];
    let order: string[] = [];
    await inOneGroup((round) => {
      order = [];
      const write = (id: string, fail: boolean) =>
        sqlite().tx(async (t) => {
          order.push(`tx ${id}`);
          t.beforeCommit(async (h) => {
            order.push(`hook ${id}`);
            await h.run("INSERT INTO t_items (id, n, note) VALUES (?, 1, 'hooked')", id);
          });
          if (fail) throw new Error("no");
        });
      hooked.push(`b1-${round}`, `b3-${round}`);
      return Promise.allSettled([write(`b1-${round}`, false), write(`b2-${round}`, true), write(`b3-${round}`, false)]);
    });
    expect(order.map((o) => o.replace(/-\d+$/, ""))).toEqual(["tx b1", "tx b2", "tx b3", "hook b1", "hook b3"]);
    // Whatever the grouping, a failed transaction's hook never ran.
    expect(await rows("hooked")).toEqual(hooked.sort());
  });

  test("a transaction that waits (a password hash, the network) closes its group: the next ones commit without it", async () => {
    const before = sqlite().commitStats.commits;
    const order: string[] = [];
    const slow = sqlite().tx(async (t) => {
      await t.run("INSERT INTO t_items (id, n, note) VALUES ('s0', 1, 'slow')");
      await Bun.sleep(30);
      order.push("slow");
    });
    const fast = Array.from({ length: 3 }, (_, i) =>
      sqlite().tx(async (t) => {
        await t.run("INSERT INTO t_items (id, n, note) VALUES (?, 1, 'slow')", `s${i + 1}`);
        order.push(`fast${i}`);
      }),
    );
    await Promise.all([slow, ...fast]);
    expect(order[0]).toBe("slow");
    expect(sqlite().commitStats.commits - before).toBe(2);
    expect((await rows("slow")).length).toBe(4);
  });
});
