/**
 * Attachment downloads over real HTTP: each attachment is served with its own content type as
 * parsed from the message (application/octet-stream when the message's is unusable), always
 * as an attachment with nosniff and a sandbox CSP, and the route's OpenAPI documents a binary body.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { until } from "../../helpers/until";
import { createMailbox, receiveWorkspace, sendMail, startInbound, type InboundEnv, type ReceiveWorkspace } from "../../helpers/mail-inbound";

let e: InboundEnv;
let w: ReceiveWorkspace;
let server: { port: number; stop(): unknown } | undefined;
let origin = "";
beforeAll(async () => {
  e = await startInbound();
  w = await receiveWorkspace(e);
  e.dns.set("sender.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
  // Over a real socket: the headers a browser would see (the binary's own listener on npm run test:bin).
  server = e.app.listen(0, "127.0.0.1") as { port: number; stop(): unknown };
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server?.stop();
  await e.stop();
});

const pdf = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n");
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const html = Buffer.from("<script>alert(document.cookie)</script>");

describe("attachment download", () => {
  test("PDF and PNG come back with their own content types, byte for byte; HTML cannot render in our origin", async () => {
    const box = await createMailbox(e, w, { local_part: "files" });
    await sendMail(e, {
      from: "ada@sender.example",
      to: `files@${w.fqdn}`,
      subject: "Files",
      text: "see attached",
      attachments: [
        { filename: "report.pdf", content: pdf, contentType: "application/pdf" },
        { filename: "chart.png", content: png, contentType: "image/png" },
        { filename: "page.html", content: html, contentType: "text/html" },
        { filename: "odd.bin", content: Buffer.from("odd"), contentType: "not a type" },
      ],
    });
    const m = await until("the message is listed", async () => (await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages`, { token: w.token })).body.data?.[0]);
    const get = (pos: number) => fetch(`${origin}${w.base}/mailboxes/${box.id}/messages/${m.id}/attachments/${pos}`, { headers: { authorization: `Bearer ${w.token}` } });

    const expected: [number, string, Buffer, string][] = [
      [0, "application/pdf", pdf, "report.pdf"],
      [1, "image/png", png, "chart.png"],
      [2, "text/html", html, "page.html"],
      [3, "application/octet-stream", Buffer.from("odd"), "odd.bin"],
    ];
    for (const [pos, type, bytes, filename] of expected) {
      const r = await get(pos);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe(type);
      expect(r.headers.get("content-disposition")).toStartWith(`attachment; filename="${filename}"`);
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("content-security-policy")).toBe("sandbox");
      expect(Buffer.from(await r.arrayBuffer()).equals(bytes)).toBe(true);
    }
    const one = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${m.id}`, { token: w.token });
    expect(one.body.attachments.map((a: any) => a.content_type)).toEqual(expected.map(([, type]) => type));
  });

  test("the OpenAPI documents the 200 as a binary body", async () => {
    const doc = await (await fetch(`${origin}/mail/openapi.json`)).json();
    const op = doc.paths["/mail/v1/workspaces/{workspace_id}/mailboxes/{id}/messages/{mid}/attachments/{position}"].get;
    expect(op.responses["200"].content).toEqual({ "application/octet-stream": { schema: { type: "string", format: "binary" } } });
  });
});
