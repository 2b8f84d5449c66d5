/**
 * One Bunker node in its own process, for multi-node tests: the real app (createApp) on
 * the configuration in its environment (DATABASE_URL, DATA_DIR, MASTER_KEY...), listening
 * on 127.0.0.1, its scheduler running, as `bunker serve` does. Only the webhook engine's
 * deadlines are shortened (TEST_REPLY_DEADLINE_MS, TEST_LEASE_MS) so that a lease left by
 * a killed node expires within a test. Prints one JSON line {"port": N} once it listens.
 */
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";

const config = loadConfig(process.env);
const app = await createApp(config, {
  webhooks: {
    replyDeadlineMs: Number(process.env.TEST_REPLY_DEADLINE_MS ?? 2_000),
    leaseMs: Number(process.env.TEST_LEASE_MS ?? 4_000),
  },
});
const server = app.listen(config.port, "127.0.0.1");
app.ctx.scheduler.start();
console.log(JSON.stringify({ port: server.port }));

const stop = async () => {
  await server.stop(true);
  await app.stop();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
