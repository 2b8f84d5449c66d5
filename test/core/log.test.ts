/**
 * Logs carry no credentials: signatures of signed URLs, tokens and keys in query strings,
 * Authorization values quoted in error text, the console's one-time setup link.
 */
import { expect, test } from "bun:test";
import { Elysia } from "elysia";
import { httpKernel } from "../../src/core/http";
import { createLogger, scrubSecrets } from "../../src/core/log";
import { Metrics } from "../../src/core/metrics";

test("secret-looking query parameters and Authorization values are redacted; the rest of the line is kept", () => {
  const lines: string[] = [];
  const log = createLogger("info", {}, (l) => lines.push(l));
  log.error("upload failed", {
    url: "https://bunker.example/social/v1/communities/c/assets/a/upload?expires=1767225600&sig=4f9c2ab1e0d7",
    s3: "https://s3.example/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20261128&X-Amz-Signature=abcdef0123",
    err: "Error: upstream said 401 to Authorization: Bearer sk_live_abcdefghijklmnop",
    callback: "https://app.example/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz",
    setup_url: "http://localhost:8080/admin/#setup=8c2e6f0a4b1d",
  });
  const line = lines[0];
  for (const secret of ["4f9c2ab1e0d7", "AKIA", "abcdef0123", "sk_live_abcdefghijklmnop", "SplxlOBeZQQYbYS6WxSbIA", "8c2e6f0a4b1d"]) expect(line).not.toContain(secret);
  expect(line).toContain("expires=1767225600&sig=[redacted]");
  expect(line).toContain("X-Amz-Algorithm=AWS4-HMAC-SHA256");
  expect(line).toContain("state=xyz");
  expect(line).toContain("Bearer [redacted]");
  expect(JSON.parse(line).msg).toBe("upload failed");
});

test("a line without anything secret-looking is unchanged", () => {
  const line = JSON.stringify({ level: "info", msg: "request", route: "/healthz", status: 200 });
  expect(scrubSecrets(line)).toBe(line);
});

test("an unhandled error logs the route template, never the URL with its query", async () => {
  const lines: string[] = [];
  const app = new Elysia().use(httpKernel(createLogger("error", {}, (l) => lines.push(l)), new Metrics())).get("/files/:id/download", () => {
    throw new Error("disk on fire");
  });
  const r = await app.handle(new Request("http://localhost/files/f_1/download?expires=1&sig=deadbeefcafe&token=t0k3n"));
  expect(r.status).toBe(500);
  expect(lines).toHaveLength(1);
  const entry = JSON.parse(lines[0]);
  expect(entry.route).toBe("/files/:id/download");
  expect(lines[0]).not.toContain("deadbeefcafe");
  expect(lines[0]).not.toContain("t0k3n");
  expect(entry.err).toContain("disk on fire");
});
