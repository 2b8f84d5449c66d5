/**
 * Child process of lazy-loading.test.ts: builds and starts an app from source as `bunker
 * serve` does (on DATA_DIR from the environment, SQLite), answers the requests any start
 * sees, and prints the npm packages in the module registry then, and again after the
 * first guide is rendered (the check that the registry shows a lazy load when it happens).
 */
import { createApp, SERVICE_MODULES } from "../../src/app";
import { loadConfig } from "../../src/config";
import { settingsOf } from "../../src/kernel/module";

/** Package names of every module loaded so far (require.cache lists ES modules too). */
function packages(): string[] {
  const names = Object.keys(require.cache).flatMap((path) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1] ?? []);
  return [...new Set(names)].sort();
}

const config = loadConfig({ PATH: process.env.PATH, DATA_DIR: process.env.DATA_DIR, SMTP_PORT: "off", LOG_LEVEL: "error" }, settingsOf(SERVICE_MODULES));
const app = await createApp(config);
await app.platform.setup.bootstrap();
app.ctx.scheduler.start();
const server = app.listen(0, "127.0.0.1");
const get = async (path: string) => {
  const r = await fetch(`http://127.0.0.1:${server.port}${path}`);
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
};
for (const path of ["/healthz", "/readyz", "/docs/json", "/platform/openapi.json"]) await get(path);
const started = packages();
await get("/docs/guides");
const afterGuide = packages();
await server.stop(true);
await app.stop();
console.log(JSON.stringify({ started, afterGuide }));
