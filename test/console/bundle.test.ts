/**
 * The committed console assets (static/admin/app.js, app.css) are what console/ builds to,
 * and the whole console stays under 300 KB gzipped.
 */
import { expect, test } from "bun:test";
import { buildConsole, committedConsole } from "../../scripts/build-console";

test("static/admin assets match a fresh build of console/ (run `bun scripts/build-console.ts` after editing console/)", async () => {
  const built = await buildConsole();
  const committed = committedConsole();
  expect(committed.js === built.js).toBe(true);
  expect(committed.css === built.css).toBe(true);
}, 60_000);

test("the console is under 300 KB gzipped (page, script and styles)", async () => {
  const { js, css } = committedConsole();
  const html = await Bun.file(new URL("../../static/admin/index.html", import.meta.url)).text();
  const gz = (s: string) => Bun.gzipSync(new TextEncoder().encode(s), { level: 9 }).length;
  const total = gz(js) + gz(css) + gz(html);
  console.log(`console bundle: ${(total / 1024).toFixed(1)} KiB gzipped (js ${(gz(js) / 1024).toFixed(1)}, css ${(gz(css) / 1024).toFixed(1)})`);
  expect(total).toBeLessThan(300 * 1024);
});
