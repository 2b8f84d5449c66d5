/**
 * Export (CSV quoting, formula injection, 1 concurrent and 5 per hour), timeline (dense
 * daily buckets, 366/367) and the deliverability verdicts, over HTTP; both engines.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAY, HOUR, MINUTE } from "../../../src/core/clock";
import { csvCell } from "../../../src/services/mail/messages/csv";
import type { MessageService } from "../../../src/services/mail/messages/service";
import { ownerWithKey, startTestApp, type TestApp } from "../../helpers/app";
import { messageService, queueOne } from "../../helpers/mail-messages";
import { inProcess, ON_BINARY } from "../../helpers/target";

let app: TestApp;
let svc: MessageService;
beforeAll(async () => {
  app = await startTestApp();
  if (ON_BINARY) return; // the tests that use the message service are source-only
  app.webhooks.options.autoKick = false;
  svc = messageService(app);
});
afterAll(async () => {
  await app.stop();
});

const base = (ws: string) => `/mail/v1/workspaces/${ws}`;

/** Queues a message and drives it to `status` (through a claim where the state machine needs one). */
async function messageWith(ws: string, status: "queued" | "sent" | "delivered" | "deferred" | "bounced" | "complained" | "failed", over: Parameters<typeof queueOne>[2] = {}, detail = "550 5.1.1 User unknown") {
  const m = await queueOne(svc, ws, over);
  if (status === "queued") return m;
  if (status === "failed") return (await svc.markFailed(m.id, null, "refused"))!;
  const c = await svc.claim(100_000); // every due message (other tests' included): this one is among them
  if (!c.messages.some((x) => x.id === m.id)) throw new Error("not claimed");
  if (status === "deferred") return (await svc.markDeferred(m.id, c.owner, { code: "4.7.0", detail: detail }))!;
  if (status === "bounced") return (await svc.markBounced(m.id, c.owner, { code: "5.7.1", detail }))!;
  await svc.markSent(m.id, c.owner);
  if (status === "sent") return m;
  await svc.markDelivered(m.id);
  if (status === "complained") await svc.markComplained(m.id);
  return m;
}

/** RFC 4180 parser (quoted fields with doubled quotes, CRLF records). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), (i += 2);
      else if (ch === '"') (quoted = false), i++;
      else (cell += ch), i++;
    } else if (ch === '"') (quoted = true), i++;
    else if (ch === ",") row.push(cell), (cell = ""), i++;
    else if (ch === "\r" && text[i + 1] === "\n") row.push(cell), rows.push(row), (row = []), (cell = ""), (i += 2);
    else (cell += ch), i++;
  }
  if (cell !== "" || row.length) row.push(cell), rows.push(row);
  return rows;
}

describe("export", () => {
  test("csv cells: RFC 4180 quoting and formula injection", () => {
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
    expect(csvCell("line\r\nbreak")).toBe('"line\r\nbreak"');
    expect(csvCell("=1+1")).toBe("'=1+1");
    expect(csvCell("+1")).toBe("'+1");
    expect(csvCell("-2")).toBe("'-2");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("\tx")).toBe("'\tx");
    expect(csvCell('=HYPERLINK("http://evil","x")')).toBe(`"'=HYPERLINK(""http://evil"",""x"")"`);
    expect(csvCell(null)).toBe("");
    expect(csvCell(3)).toBe("3");
  });

  inProcess("queues messages through the in-process MessageService")("streams every matching message, no body columns, cells safe in a spreadsheet", async () => {
    const { token, ws } = await ownerWithKey(app);
    const evil = await queueOne(svc, ws.id, { subject: '=HYPERLINK("http://evil.example","click")', to: "a@example.com", templateName: "t1" });
    const multi = await queueOne(svc, ws.id, { subject: 'Line one\nsays "hi", twice', to: "b@example.com", templateName: "t1" });
    await queueOne(svc, ws.id, { subject: "other template", templateName: "t2" });
    const r = await app.handle(new Request(`http://localhost${base(ws.id)}/messages/export?template=t1`, { headers: { authorization: `Bearer ${token}` } }));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(r.headers.get("content-disposition")).toMatch(/^attachment; filename="messages-\d{4}-\d{2}-\d{2}\.csv"$/);
    const text = await r.text();
    expect(text.endsWith("\r\n")).toBe(true);
    const rows = parseCsv(text);
    expect(rows[0]).toEqual([
      "id", "created_at", "status", "from_address", "to_address", "subject", "template_name", "domain_id", "sent_at", "delivered_at",
      "deferred_at", "deferral_count", "bounce_code", "bounce_detail", "spf_result", "dkim_result", "dmarc_result",
    ]);
    expect(rows[0]!.some((h) => h.includes("body") || h.includes("transcript"))).toBe(false);
    expect(rows.length).toBe(3);
    const byId = new Map(rows.slice(1).map((x) => [x[0], x]));
    expect(byId.get(evil.id)![5]).toBe(`'=HYPERLINK("http://evil.example","click")`);
    expect(byId.get(multi.id)![5]).toBe('Line one\nsays "hi", twice');
    expect(byId.get(evil.id)![11]).toBe("0");
    // Filter validation is the list's.
    expect((await app.call("GET", `${base(ws.id)}/messages/export?status=nope`, { token })).status).toBe(400);
  });

  inProcess("queues messages through the in-process MessageService")("pages through more rows than one page", async () => {
    const { token, ws } = await ownerWithKey(app);
    await svc.queue(ws.id, Array.from({ length: 1203 }, (_, i) => ({ domainId: null, from: "a@b.example", to: `r${i}@example.com`, subject: `s${i}` })));
    const r = await app.call("GET", `${base(ws.id)}/messages/export`, { token });
    expect(r.status).toBe(200);
    const rows = parseCsv(r.body as string);
    expect(rows.length).toBe(1204);
    expect(new Set(rows.slice(1).map((x) => x[0])).size).toBe(1203);
  });

  inProcess("queues messages through the in-process MessageService")("one running export per workspace: 429 EXPORT_LIMIT with Retry-After until it ends or is abandoned", async () => {
    const { token, ws } = await ownerWithKey(app);
    const other = await ownerWithKey(app);
    await queueOne(svc, ws.id);
    const get = (t = token, w = ws.id) => app.handle(new Request(`http://localhost${base(w)}/messages/export`, { headers: { authorization: `Bearer ${t}` } }));
    const running = await get();
    expect(running.status).toBe(200);
    const busy = await get();
    expect(busy.status).toBe(429);
    expect(busy.headers.get("retry-after")).toBe("5");
    expect((await busy.json()).error.code).toBe("EXPORT_LIMIT");
    expect((await get(other.token, other.ws.id)).status).toBe(200); // other workspaces are not held up
    await running.text(); // finished: the lock goes
    const next = await get();
    expect(next.status).toBe(200);
    await next.body!.cancel(); // abandoned by the client: the lock goes too
    const after = await get();
    expect(after.status).toBe(200);
    await after.text();
  });

  inProcess("moves the injected clock across the hour window")("five per hour per workspace (sliding): the sixth is 429 EXPORT_LIMIT with Retry-After", async () => {
    const { token, ws } = await ownerWithKey(app);
    const get = () => app.call("GET", `${base(ws.id)}/messages/export`, { token });
    for (let i = 0; i < 5; i++) {
      expect((await get()).status).toBe(200);
      app.clock.advance(MINUTE);
    }
    const sixth = await get();
    expect(sixth.status).toBe(429);
    expect(sixth.body.error.code).toBe("EXPORT_LIMIT");
    expect(Number(sixth.headers.get("retry-after"))).toBe(55 * 60);
    app.clock.advance(55 * MINUTE);
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
  });
});

describe("timeline", () => {
  inProcess("queues messages through the in-process MessageService at injected-clock dates")("dense daily buckets with zeros; since inclusive, until exclusive; metric sent or bounced", async () => {
    const { token, ws } = await ownerWithKey(app);
    const start = app.clock.nowMs();
    app.clock.set(Date.parse("2027-03-01T10:00:00.000Z"));
    await messageWith(ws.id, "sent");
    await messageWith(ws.id, "sent");
    app.clock.set(Date.parse("2027-03-03T23:59:59.999Z"));
    await messageWith(ws.id, "sent");
    await messageWith(ws.id, "bounced");
    app.clock.set(Date.parse("2027-03-05T00:00:00.000Z"));
    await messageWith(ws.id, "sent"); // on until: excluded
    app.clock.set(start);
    const r = await app.call("GET", `${base(ws.id)}/messages/timeline?granularity=day&since=2027-02-28&until=2027-03-05`, { token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      granularity: "day",
      metric: "sent",
      points: [
        { date: "2027-02-28", count: 0 },
        { date: "2027-03-01", count: 2 },
        { date: "2027-03-02", count: 0 },
        { date: "2027-03-03", count: 1 },
        { date: "2027-03-04", count: 0 },
      ],
    });
    const b = await app.call("GET", `${base(ws.id)}/messages/timeline?granularity=day&since=2027-03-03&until=2027-03-04&metric=bounced`, { token });
    expect(b.body).toEqual({ granularity: "day", metric: "bounced", points: [{ date: "2027-03-03", count: 1 }] });
  });

  test("366 buckets are fine, 367 are 400; other bad queries are 400", async () => {
    const { token, ws } = await ownerWithKey(app);
    const get = (q: string) => app.call("GET", `${base(ws.id)}/messages/timeline?${q}`, { token });
    const ok = await get("granularity=day&since=2027-01-01&until=2028-01-02");
    expect(ok.status).toBe(200);
    expect(ok.body.points.length).toBe(366);
    expect(ok.body.points.every((p: any) => p.count === 0)).toBe(true);
    const over = await get("granularity=day&since=2027-01-01&until=2028-01-03");
    expect(over.status).toBe(400);
    expect(over.body.error.details[0].reason).toContain("366");
    for (const q of [
      "since=2027-01-01&until=2027-01-02",
      "granularity=hour&since=2027-01-01&until=2027-01-02",
      "granularity=day&until=2027-01-02",
      "granularity=day&since=2027-01-01",
      "granularity=day&since=2027-01-02&until=2027-01-02",
      "granularity=day&since=2027-02-30&until=2027-03-02",
      "granularity=day&since=yesterday&until=2027-01-02",
      "granularity=day&since=2027-01-01&until=2027-01-02&metric=opened",
    ]) expect({ q, status: (await get(q)).status }).toEqual({ q, status: 400 });
  });
});

describe("deliverability", () => {
  const verdict = async (token: string, ws: string, q = "") => {
    const r = await app.call("GET", `${base(ws)}/deliverability${q}`, { token });
    expect(r.status).toBe(200);
    return r.body;
  };

  inProcess("queues messages through the in-process MessageService")("no_data without mail (or only queued mail); window_days 1-90, default 14", async () => {
    const { token, ws } = await ownerWithKey(app);
    expect(await verdict(token, ws.id)).toEqual({
      verdict: "no_data", window_days: 14, left_queue: 0, queued: 0, confirmed: 0, negative: 0, deferred: 0, bounced: 0,
      negative_rate: 0, confirmed_rate: 0, block_signals: [], summary: expect.any(String),
    });
    await messageWith(ws.id, "queued");
    const v = await verdict(token, ws.id, "?window_days=1");
    expect(v).toMatchObject({ verdict: "no_data", window_days: 1, queued: 1, left_queue: 0 });
    expect((await verdict(token, ws.id, "?window_days=90")).window_days).toBe(90);
    for (const bad of ["0", "91", "abc", "1.5"]) expect((await app.call("GET", `${base(ws.id)}/deliverability?window_days=${bad}`, { token })).status).toBe(400);
  });

  inProcess("queues messages through the in-process MessageService and drives them to their outcomes")("unconfirmed: mail left and nothing came back; healthy only with delivery evidence", async () => {
    const { token, ws } = await ownerWithKey(app);
    for (let i = 0; i < 5; i++) await messageWith(ws.id, "sent");
    const v = await verdict(token, ws.id);
    expect(v).toMatchObject({ verdict: "unconfirmed", left_queue: 5, confirmed: 0, negative: 0, negative_rate: 0, confirmed_rate: 0 });
    expect(v.summary).toContain("5 messages left the queue");
    await messageWith(ws.id, "delivered");
    expect(await verdict(token, ws.id)).toMatchObject({ verdict: "healthy", left_queue: 6, confirmed: 1, confirmed_rate: 0.1667 });
  });

  inProcess("queues messages through the in-process MessageService and drives them to their outcomes")("at_risk: negatives at 5% or more, or any complaint at volume", async () => {
    const { token, ws } = await ownerWithKey(app);
    for (let i = 0; i < 19; i++) await messageWith(ws.id, "delivered");
    await messageWith(ws.id, "deferred", {}, "451 4.3.0 try again later");
    expect(await verdict(token, ws.id)).toMatchObject({ verdict: "at_risk", left_queue: 20, negative: 1, deferred: 1, negative_rate: 0.05, confirmed_rate: 0.95 });
    const two = await ownerWithKey(app);
    for (let i = 0; i < 30; i++) await messageWith(two.ws.id, "delivered");
    expect((await verdict(two.token, two.ws.id)).verdict).toBe("healthy");
    await messageWith(two.ws.id, "bounced");
    expect((await verdict(two.token, two.ws.id)).verdict).toBe("healthy"); // 1 of 31: 3.2%
    await messageWith(two.ws.id, "complained");
    expect(await verdict(two.token, two.ws.id)).toMatchObject({ verdict: "at_risk", bounced: 1, negative: 2 });
  });

  inProcess("queues messages through the in-process MessageService and drives them to their outcomes on the injected clock")("blocked: blocklist refusals grouped into block_signals; the window excludes older mail", async () => {
    const { token, ws } = await ownerWithKey(app);
    const start = app.clock.nowMs();
    app.clock.advance(-20 * DAY);
    await messageWith(ws.id, "bounced", {}, "554 5.7.1 Service unavailable; Client host [10.0.0.9] blocked using zen.spamhaus.org");
    app.clock.set(start);
    for (let i = 0; i < 6; i++) await messageWith(ws.id, "delivered");
    await messageWith(ws.id, "bounced", {}, "554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org");
    await messageWith(ws.id, "bounced", {}, "554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using zen.spamhaus.org");
    await messageWith(ws.id, "deferred", {}, "421 4.7.0 IP listed on Barracuda reputation block list");
    await messageWith(ws.id, "bounced", {}, "550 5.1.1 User unknown");
    const v = await verdict(token, ws.id);
    expect(v).toMatchObject({ verdict: "blocked", left_queue: 10, bounced: 3, deferred: 1, negative: 4, negative_rate: 0.4, confirmed_rate: 0.6 });
    expect(v.block_signals).toEqual([
      { detail: "554 5.7.1 Service unavailable; Client host [<ip>] blocked using zen.spamhaus.org", count: 2 },
      { detail: "421 4.7.0 IP listed on Barracuda reputation block list", count: 1 },
    ]);
    expect(v.summary).toContain("blocklist");
    const wide = await verdict(token, ws.id, "?window_days=30");
    expect(wide.left_queue).toBe(11);
    expect(wide.block_signals[0].count).toBe(3);
  });

  inProcess("queues messages through the in-process MessageService and drives them to their outcomes")("at_risk with a single block signal below the blocked share", async () => {
    const { token, ws } = await ownerWithKey(app);
    for (let i = 0; i < 39; i++) await messageWith(ws.id, "delivered");
    await messageWith(ws.id, "bounced", {}, "550 5.7.1 Mail from 192.0.2.1 refused: listed at bl.spamcop.net");
    const v = await verdict(token, ws.id);
    expect(v).toMatchObject({ verdict: "at_risk", block_signals: [{ detail: "550 5.7.1 Mail from <ip> refused: listed at bl.spamcop.net", count: 1 }] });
  });
});

test("timeline and deliverability need mail.message.read; another workspace is 404", async () => {
  const one = await ownerWithKey(app);
  const two = await ownerWithKey(app);
  expect((await app.call("GET", `${base(one.ws.id)}/deliverability`, { token: two.token })).status).toBe(404);
  expect((await app.call("GET", `${base(one.ws.id)}/messages/export`, { token: two.token })).status).toBe(404);
  const r = await app.call("POST", `/platform/v1/workspaces/${one.ws.slug}/api-keys`, { token: one.session, body: { name: "s", policy: [{ effect: "allow", actions: ["mail.suppression.read"], resources: ["*"] }] } });
  const key = r.body.key as string;
  for (const path of ["deliverability", "messages/timeline?granularity=day&since=2027-01-01&until=2027-01-02", "messages/export", "messages"]) {
    expect({ path, status: (await app.call("GET", `${base(one.ws.id)}/${path}`, { token: key })).status }).toEqual({ path, status: 403 });
  }
  void HOUR;
});
