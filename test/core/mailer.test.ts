import { afterEach, expect, test } from "bun:test";
import { ManualClock, SECOND } from "../../src/core/clock";
import { tx } from "../../src/core/db";
import { createLogger } from "../../src/core/log";
import { MAX_ATTEMPTS, retryDelay, SystemMailer } from "../../src/core/mailer";
import { freshDb } from "../helpers/db";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink";

const sinks: SmtpSink[] = [];
const mailers: SystemMailer[] = [];
afterEach(async () => {
  mailers.splice(0).forEach((m) => m.close());
  await Promise.all(sinks.splice(0).map((s) => s.stop()));
});

async function sink(opts?: Parameters<typeof startSmtpSink>[0]) {
  const s = await startSmtpSink(opts);
  sinks.push(s);
  return s;
}

async function setup(relayUrl: string | null) {
  const { db } = await freshDb();
  const clock = new ManualClock(Date.parse("2030-01-01T00:00:00Z"));
  const lines: Record<string, any>[] = [];
  const log = createLogger("debug", {}, (l) => lines.push(JSON.parse(l)));
  const mailer = new SystemMailer({ db, clock, log, relayUrl, from: "Bunker <no-reply@bunker.test>" });
  mailers.push(mailer);
  return { db, clock, lines, mailer };
}

/** A loopback port with nothing listening on it (a relay that is down). */
async function deadPort() {
  const s = await startSmtpSink();
  await s.stop();
  return s.port;
}

test("enqueue + deliverPending delivers a real mail through the relay", async () => {
  const relay = await sink();
  const { db, mailer } = await setup(relay.url);
  const { id } = await mailer.enqueue(db, { to: "ada@example.com", subject: "Your code", text: "Code: 123456", html: "<p>Code: <b>123456</b></p>" });
  expect(await mailer.get(id)).toMatchObject({ status: "queued", attempts: 0, to: "ada@example.com", from: "Bunker <no-reply@bunker.test>" });

  expect(await mailer.deliverPending()).toEqual({ sent: 1, failed: 0 });
  const got = await relay.waitFor((m) => m.to.includes("ada@example.com"));
  expect(got.to).toEqual(["ada@example.com"]);
  expect(got.from).toBe("no-reply@bunker.test");
  expect(got.headerFrom).toBe('"Bunker" <no-reply@bunker.test>');
  expect(got.subject).toBe("Your code");
  expect(got.text.trim()).toBe("Code: 123456");
  expect(got.html).toContain("<b>123456</b>");

  const row = (await mailer.get(id))!;
  expect(row.status).toBe("sent");
  expect(row.attempts).toBe(1);
  expect(row.sent_at).toBe("2030-01-01T00:00:00.000Z");
  expect(row.message_id).toMatch(/^<.+@.+>$/);
  expect(got.raw).toContain(`Message-ID: ${row.message_id}`);
  // Nothing left to do.
  expect(await mailer.deliverPending()).toEqual({ sent: 0, failed: 0 });
  expect(relay.messages).toHaveLength(1);
});

test("relay credentials and a per-message sender are used", async () => {
  const relay = await sink();
  const { db, mailer } = await setup(`smtp://mailer:s%3Acret@127.0.0.1:${relay.port}`);
  await mailer.enqueue(db, { to: "bob@example.com", from: "invites@bunker.test", subject: "Line one\r\nBcc: evil@example.com", text: "hi" });
  expect(await mailer.deliverPending()).toEqual({ sent: 1, failed: 0 });
  const got = relay.messages[0];
  expect(got.user).toBe("mailer");
  expect(got.from).toBe("invites@bunker.test");
  expect(got.subject).toBe("Line one Bcc: evil@example.com");
  expect(got.to).toEqual(["bob@example.com"]); // the newline did not add a recipient
});

test("relay down: messages stay queued with attempts and backoff, then go out once it is up", async () => {
  const port = await deadPort();
  const { db, mailer, clock } = await setup(`smtp://127.0.0.1:${port}`);
  const a = await mailer.enqueue(db, { to: "a@example.com", subject: "A", text: "first" });
  clock.advance(SECOND);
  const b = await mailer.enqueue(db, { to: "b@example.com", subject: "B", text: "second" });

  // The first attempt fails on the dead relay; the run stops there instead of burning
  // an attempt of every other message on the same dead relay.
  expect(await mailer.deliverPending()).toEqual({ sent: 0, failed: 1 });
  const afterFirst = (await mailer.get(a.id))!;
  expect(afterFirst).toMatchObject({ status: "queued", attempts: 1, next_attempt_at: "2030-01-01T00:00:31.000Z" });
  expect(afterFirst.last_error).toMatch(/ECONNECTION|ECONNREFUSED/);
  expect(await mailer.get(b.id)).toMatchObject({ status: "queued", attempts: 0 });

  expect(await mailer.deliverPending()).toEqual({ sent: 0, failed: 1 }); // now b's turn
  expect(await mailer.get(b.id)).toMatchObject({ attempts: 1, next_attempt_at: "2030-01-01T00:00:31.000Z" });
  expect(await mailer.deliverPending()).toEqual({ sent: 0, failed: 0 }); // both backing off

  const relay = await sink({ port });
  expect(await mailer.deliverPending()).toEqual({ sent: 0, failed: 0 }); // still not due
  clock.advance(30 * SECOND);
  expect(await mailer.deliverPending()).toEqual({ sent: 2, failed: 0 });
  expect(relay.messages.map((m) => m.subject)).toEqual(["A", "B"]);
  expect(await mailer.get(a.id)).toMatchObject({ status: "sent", attempts: 2, last_error: null, sent_at: "2030-01-01T00:00:31.000Z" });
});

test("after the last attempt a message is failed and no longer retried", async () => {
  const port = await deadPort();
  const { db, mailer, clock } = await setup(`smtp://127.0.0.1:${port}`);
  const { id } = await mailer.enqueue(db, { to: "c@example.com", subject: "C", text: "x" });
  const delays: number[] = [];
  for (let i = 1; i <= MAX_ATTEMPTS; i++) {
    expect(await mailer.deliverPending()).toEqual({ sent: 0, failed: 1 });
    const row = (await mailer.get(id))!;
    expect(row.attempts).toBe(i);
    if (i < MAX_ATTEMPTS) {
      expect(row.status).toBe("queued");
      const delay = Date.parse(row.next_attempt_at) - clock.nowMs();
      delays.push(delay);
      clock.advance(delay);
    }
  }
  expect(delays).toEqual([1, 2, 3, 4, 5, 6, 7].map(retryDelay));
  expect(delays.slice(0, 3)).toEqual([30_000, 60_000, 120_000]);
  expect((await mailer.get(id))!.status).toBe("failed");
  clock.advance(24 * 3600 * SECOND);
  expect(await mailer.deliverPending()).toEqual({ sent: 0, failed: 0 });
});

test("a recipient the relay refuses for good fails at once; others still go out", async () => {
  const relay = await sink({ rejectRecipient: (a) => a.startsWith("gone@") });
  const { db, mailer } = await setup(relay.url);
  const gone = await mailer.enqueue(db, { to: "gone@example.com", subject: "X", text: "x" });
  const ok = await mailer.enqueue(db, { to: "ok@example.com", subject: "Y", text: "y" });
  expect(await mailer.deliverPending()).toEqual({ sent: 1, failed: 1 });
  expect(await mailer.get(gone.id)).toMatchObject({ status: "failed", attempts: 1 });
  expect((await mailer.get(gone.id))!.last_error).toContain("550");
  expect((await mailer.get(ok.id))!.status).toBe("sent");
  expect(relay.messages.map((m) => m.to)).toEqual([["ok@example.com"]]);
});

test("without a relay (dev mode) messages are logged at info and marked logged", async () => {
  const { db, mailer, lines } = await setup(null);
  expect(mailer.devMode).toBe(true);
  const { id } = await mailer.enqueue(db, { to: "dev@example.com", subject: "Reset your password", text: "Your code is 424242" });
  expect(await mailer.deliverPending()).toEqual({ sent: 1, failed: 0 });
  expect(await mailer.get(id)).toMatchObject({ status: "logged", attempts: 1, sent_at: "2030-01-01T00:00:00.000Z" });
  const line = lines.find((l) => l.level === "info" && l.id === id);
  expect(line).toMatchObject({ to: "dev@example.com", subject: "Reset your password", text: "Your code is 424242" });
  expect((await mailer.list(10)).map((m) => m.id)).toEqual([id]);
});

test("enqueue is a plain insert that rolls back with the caller's transaction", async () => {
  const { db, mailer, clock } = await setup(null);
  await expect(
    tx(db, async (t) => {
      await mailer.enqueue(t, { to: "x@example.com", subject: "s", text: "t" });
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  expect(await mailer.list(10)).toEqual([]);
  const first = await tx(db, (t) => mailer.enqueue(t, { to: "x@example.com", subject: "s1", text: "t" }));
  clock.advance(SECOND);
  const second = await mailer.enqueue(db, { to: "y@example.com", subject: "s2", text: "t" });
  expect((await mailer.list(10)).map((m) => m.id)).toEqual([second.id, first.id]);
});

test("enqueue refuses what is not one address", async () => {
  const { db, mailer } = await setup(null);
  for (const to of ["", "nope", "a@b.c, d@e.f", "Ada <ada@example.com>", "a@b\r\nRCPT TO:<x@y>"]) {
    await expect(mailer.enqueue(db, { to, subject: "s", text: "t" })).rejects.toThrow(expect.objectContaining({ status: 400, code: "VALIDATION_ERROR" }));
  }
  await expect(mailer.enqueue(db, { to: "a@example.com", from: "x@y\r\nBcc: z@w", subject: "s", text: "t" })).rejects.toThrow(expect.objectContaining({ status: 400 }));
  expect(await mailer.list(10)).toEqual([]);
});

test("purge removes finished messages only", async () => {
  const { db, mailer, clock } = await setup(null);
  const done = await mailer.enqueue(db, { to: "a@example.com", subject: "a", text: "a" });
  await mailer.deliverPending();
  clock.advance(10 * SECOND);
  const queued = await mailer.enqueue(db, { to: "b@example.com", subject: "b", text: "b" });
  expect(await mailer.purgeFinishedBefore(clock.nowMs())).toBe(1);
  expect(await mailer.get(done.id)).toBeNull();
  expect((await mailer.get(queued.id))!.status).toBe("queued");
});
