// Mailboxes CRUD (issue 14): create/list/get/patch/delete with their validation and limits.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey } from "../../helpers/app";
import { createMailbox, receiveWorkspace, startInbound, type InboundEnv, type ReceiveWorkspace } from "../../helpers/mail-inbound";

let e: InboundEnv;
let w: ReceiveWorkspace;
beforeAll(async () => {
  e = await startInbound();
  w = await receiveWorkspace(e);
});
afterAll(() => e.stop());

describe("mailboxes", () => {
  test("create: defaults, seq_id per workspace, address, 409 MAILBOX_EXISTS ignoring case", async () => {
    const a = await e.app.call("POST", `${w.base}/mailboxes`, { token: w.token, body: { domain_id: w.domainId, local_part: "Support" } });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ local_part: "Support", address: `Support@${w.fqdn}`, retention_days: 30, status: "active", display_name: null, workspace_id: w.wsId });
    const b = await e.app.call("POST", `${w.base}/mailboxes`, { token: w.token, body: { domain_id: w.domainId, local_part: "billing", display_name: "Billing", retention_days: 3650 } });
    expect(b.status).toBe(201);
    expect(Number(b.body.seq_id)).toBe(Number(a.body.seq_id) + 1);
    const dup = await e.app.call("POST", `${w.base}/mailboxes`, { token: w.token, body: { domain_id: w.domainId, local_part: "SUPPORT" } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("MAILBOX_EXISTS");
  });

  test("validation: local_part (RFC 5321 dot-string, 64 max, reserved prefixes), retention 1-3650, domain", async () => {
    const post = (body: Record<string, unknown>) => e.app.call("POST", `${w.base}/mailboxes`, { token: w.token, body: { domain_id: w.domainId, ...body } });
    expect((await post({ local_part: "a".repeat(64) })).status).toBe(201);
    expect((await post({ local_part: "b".repeat(65) })).status).toBe(400);
    for (const bad of ["", "a..b", ".a", "a.", "a b", "a@b", '"quoted"', "bounces+x", "Bunker-Test-abc", "a\r\nb"]) {
      const r = await post({ local_part: bad });
      expect([bad, r.status]).toEqual([bad, 400]);
    }
    expect((await post({ local_part: "o'brien+tag=x" })).status).toBe(201);
    expect((await post({ local_part: "r1", retention_days: 1 })).status).toBe(201);
    expect((await post({ local_part: "r2", retention_days: 0 })).status).toBe(400);
    expect((await post({ local_part: "r3", retention_days: 3651 })).status).toBe(400);
    expect((await post({ local_part: "r4", retention_days: 1.5 })).status).toBe(400);
    expect((await post({ local_part: "r5", domain_id: "0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f" })).status).toBe(404);
    // A send-only domain cannot have mailboxes.
    const d = await e.app.call("POST", `${w.base}/domains`, { token: w.token, body: { fqdn: `send${Date.now()}.example` } });
    const s = await post({ local_part: "x", domain_id: d.body.id });
    expect(s.status).toBe(400);
    expect(s.body.error.code).toBe("DOMAIN_NOT_RECEIVING");
  });

  test("list pages in seq order with filters; patch; soft delete frees the address; 404 across workspaces", async () => {
    const w2 = await receiveWorkspace(e);
    const boxes = [];
    for (let i = 0; i < 3; i++) boxes.push(await createMailbox(e, w2));
    const p1 = await e.app.call("GET", `${w2.base}/mailboxes?limit=2`, { token: w2.token });
    expect(p1.status).toBe(200);
    expect(p1.body.data.map((b: any) => b.id)).toEqual([boxes[0]!.id, boxes[1]!.id]);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await e.app.call("GET", `${w2.base}/mailboxes?limit=2&cursor=${p1.body.pagination.next_cursor}`, { token: w2.token });
    expect(p2.body.data.map((b: any) => b.id)).toEqual([boxes[2]!.id]);
    expect(p2.body.pagination).toEqual({ has_more: false, next_cursor: null });
    expect((await e.app.call("GET", `${w2.base}/mailboxes?limit=101`, { token: w2.token })).status).toBe(400);
    expect((await e.app.call("GET", `${w2.base}/mailboxes?status=gone`, { token: w2.token })).status).toBe(400);
    expect((await e.app.call("GET", `${w2.base}/mailboxes?cursor=%%%`, { token: w2.token })).status).toBe(400);

    const patched = await e.app.call("PATCH", `${w2.base}/mailboxes/${boxes[1]!.id}`, { token: w2.token, body: { display_name: "Help desk", retention_days: 7, status: "disabled" } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ display_name: "Help desk", retention_days: 7, status: "disabled" });
    expect((await e.app.call("PATCH", `${w2.base}/mailboxes/${boxes[1]!.id}`, { token: w2.token, body: { status: "deleted" } })).status).toBe(400);
    const disabled = await e.app.call("GET", `${w2.base}/mailboxes?status=disabled`, { token: w2.token });
    expect(disabled.body.data.map((b: any) => b.id)).toEqual([boxes[1]!.id]);
    const byDomain = await e.app.call("GET", `${w2.base}/mailboxes?domain_id=${w2.domainId}`, { token: w2.token });
    expect(byDomain.body.data).toHaveLength(3);

    // Another workspace's mailbox is 404.
    expect((await e.app.call("GET", `${w.base}/mailboxes/${boxes[0]!.id}`, { token: w.token })).status).toBe(404);
    expect((await e.app.call("PATCH", `${w.base}/mailboxes/${boxes[0]!.id}`, { token: w.token, body: { display_name: "x" } })).status).toBe(404);

    // The domain is in use while it has mailboxes.
    const del = await e.app.call("DELETE", `${w2.base}/domains/${w2.domainId}`, { token: w2.token });
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe("DOMAIN_IN_USE");

    expect((await e.app.call("DELETE", `${w2.base}/mailboxes/${boxes[0]!.id}`, { token: w2.token })).status).toBe(204);
    expect((await e.app.call("GET", `${w2.base}/mailboxes/${boxes[0]!.id}`, { token: w2.token })).status).toBe(404);
    expect((await e.app.call("DELETE", `${w2.base}/mailboxes/${boxes[0]!.id}`, { token: w2.token })).status).toBe(404);
    const again = await e.app.call("POST", `${w2.base}/mailboxes`, { token: w2.token, body: { domain_id: w2.domainId, local_part: boxes[0]!.local_part } });
    expect(again.status).toBe(201);
  });

  test("a member without mail.mailbox.* gets 403; the mail service switch applies", async () => {
    const other = await ownerWithKey(e.app);
    expect((await e.app.call("GET", `${w.base}/mailboxes`, { token: other.token })).status).toBe(404);
    const limited = await e.app.call("POST", `/platform/v1/workspaces/${other.ws.slug}/api-keys`, {
      token: other.session,
      body: { name: "ro", policy: [{ effect: "allow", actions: ["mail.domain.read"], resources: ["*"] }] },
    });
    const r = await e.app.call("GET", `/mail/v1/workspaces/${other.ws.id}/mailboxes`, { token: limited.body.key });
    expect(r.status).toBe(403);
  });
});
