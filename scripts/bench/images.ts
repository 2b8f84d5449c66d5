/**
 * `npm run bench -- images`: community image processing in the compiled binary, renditions
 * per second.
 *
 * Runs dist/bunker (`npm run build` first, or BENCH_BINARY=<path>) copied alone into an empty
 * directory, as shipped, on SQLite and the local object store. For each size it uploads
 * BENCH_IMAGES JPEGs (default 30, each different: smooth noise plus grain, so they encode
 * like photos rather than flat colour) over HTTP, and waits until the binary's scheduler
 * (social.assets.process: every 5 s, claims 10 and processes them one after another) made
 * them ready. Each image is one upright re-encode of the original plus four renditions
 * (thumb 200, small 640, large 1600 as JPEG, webp 1600).
 *
 * Reported per size:
 * - processing: the median gap between consecutive assets' finish times (updated_at), which
 *   within a claimed batch is the time to process one image (the waits for the next tick
 *   fall between batches and are outliers the median ignores); renditions/s = 4 / that;
 * - end to end: images from the first upload to the last ready, scheduler waits included;
 * - CPU seconds the server used per image (/proc, Linux).
 * A first image is processed before measuring: it loads libvips (written to DATA_DIR once).
 *
 * Environment: BENCH_IMAGES (30), BENCH_SIZES (4000x3000,1600x1200), BENCH_BINARY.
 * Report only; exits 0.
 */
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { REPO_ROOT, api, benchOwner, envNumber, fmtNum, freePort, machine, median, procCpuSeconds, sleep, table, tempDir, watchdog } from "./lib";

export default async function main() {
  const count = Math.floor(envNumber("BENCH_IMAGES", 30, 3));
  const sizes = (process.env.BENCH_SIZES ?? "4000x3000,1600x1200").split(",").map((s) => {
    const m = /^(\d+)x(\d+)$/.exec(s.trim());
    if (!m) throw new Error(`BENCH_SIZES: "${s}" is not <width>x<height>`);
    return [Number(m[1]), Number(m[2])] as const;
  });
  const source = process.env.BENCH_BINARY ?? join(REPO_ROOT, "dist/bunker");
  if (!existsSync(source)) throw new Error(`${source} does not exist: run \`npm run build\` first (or set BENCH_BINARY)`);
  watchdog(900_000, "bench images");
  const m = machine();
  console.log(`bench images: ${m.cores} cores (${m.cpuModel}), ${m.platform}, binary ${source}\n`);

  // The binary alone in an empty directory, as on a fresh VM.
  const dir = tempDir("bunker-bench-images-");
  const vm = join(dir, "vm");
  mkdirSync(vm);
  copyFileSync(source, join(vm, "bunker"));
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: vm, DATA_DIR: join(dir, "data"), HOST: "127.0.0.1", PORT: String(port), SMTP_PORT: "off", PUBLIC_URL: url, LOG_LEVEL: "info", CONSOLE_SIGNUP: "open" };
  const proc = Bun.spawn([join(vm, "bunker"), "serve"], { cwd: vm, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  process.on("exit", () => proc.kill("SIGKILL"));
  let log = "";
  void (async () => {
    for await (const c of proc.stdout as ReadableStream<Uint8Array>) log += new TextDecoder().decode(c);
  })();
  const deadline = Date.now() + 30_000;
  while (!(await fetch(`${url}/healthz`).then((r) => r.ok, () => false))) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the binary did not start:\n${log.slice(-2000)}`);
    await sleep(50);
  }

  const { session, workspaceId } = await benchOwner(url, "bench-images");
  if ((await api(url, "PUT", "/platform/v1/workspaces/bench-images/services/social", { token: session })).status !== 200) throw new Error("enabling the community service failed");
  const c = await api(url, "POST", `/social/v1/workspaces/${workspaceId}/communities`, { token: session, body: { slug: "bench-images", display_name: "Bench images" } });
  if (c.status !== 201) throw new Error(`community create failed: ${c.status} ${JSON.stringify(c.body)}`);
  const base = `/social/v1/communities/${c.body.id}`;
  const actor = await api(url, "POST", `${base}/actors`, { token: session, body: { external_id: "bench", display_name: "Bench" } });
  if (actor.status !== 201) throw new Error(`actor failed: ${actor.status} ${JSON.stringify(actor.body)}`);
  const actorId = actor.body.actor.id as string;

  const upload = async (bytes: Uint8Array): Promise<string> => {
    const form = new FormData();
    form.append("actor_id", actorId);
    form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), "photo.jpg");
    const r = await fetch(`${url}${base}/assets`, { method: "POST", headers: { authorization: `Bearer ${session}` }, body: form });
    const body = (await r.json()) as any;
    if (r.status !== 201) throw new Error(`upload failed: ${r.status} ${JSON.stringify(body)}`);
    return body.id;
  };
  const ready = async (ids: string[]) => {
    const out: any[] = [];
    for (const id of ids) {
      for (;;) {
        const a = (await api(url, "GET", `${base}/assets/${id}`, { token: session })).body;
        if (a.status === "failed") throw new Error(`asset ${id} failed: ${a.failure_reason}`);
        if (a.status === "ready") {
          out.push(a);
          break;
        }
        await sleep(100);
      }
    }
    return out;
  };

  const rows: string[][] = [];
  let warmed = false;
  for (const [w, h] of sizes) {
    process.stdout.write(`${w}x${h}: making ${count} JPEGs ... `);
    const images: Uint8Array[] = [];
    for (let i = 0; i < count; i++) images.push(await photo(w, h, i + 1));
    const avg = images.reduce((n, b) => n + b.byteLength, 0) / count;
    console.log(`${fmtNum(avg / 1024)} KiB each on average`);
    if (!warmed) {
      await ready([await upload(images[0])]);
      warmed = true;
    }
    const cpu0 = procCpuSeconds(proc.pid);
    const t0 = performance.now();
    const ids: string[] = [];
    for (const img of images) ids.push(await upload(img));
    const assets = await ready(ids);
    const wall = (performance.now() - t0) / 1000;
    const cpu1 = procCpuSeconds(proc.pid);
    const done = assets.map((a) => Date.parse(a.updated_at)).sort((a, b) => a - b);
    const perImage = median(done.slice(1).map((t, i) => t - done[i])) / 1000;
    rows.push([
      `${w}x${h}`,
      fmtNum(avg / 1024),
      fmtNum(perImage * 1000),
      fmtNum(4 / perImage, 1),
      fmtNum(count / wall, 2),
      cpu0 === null || cpu1 === null ? "-" : fmtNum((cpu1 - cpu0) / count, 2),
    ]);
  }
  console.log(`\n${table(["size", "KiB", "ms per image", "renditions/s", "end to end images/s", "server CPU s/image"], rows, [false, true, true, true, true, true])}`);
  const loaded = log.split("\n").find((l) => l.includes('"msg":"libvips loaded"'));
  console.log(`\n${count} images per size, uploaded one after another; one scheduler tick claims 10. ${loaded ? `First use: ${loaded}` : "(no 'libvips loaded' line: was this binary built from this checkout?)"}`);
  proc.kill("SIGTERM");
  await proc.exited;
}

/** A photo-like JPEG: smooth colour fields (upscaled noise) plus fine grain, different per seed. */
async function photo(width: number, height: number, seed: number): Promise<Uint8Array> {
  let s = seed * 2654435761;
  const rnd = () => ((s = (s ^ (s << 13)) >>> 0), (s = (s ^ (s >>> 17)) >>> 0), (s = (s ^ (s << 5)) >>> 0), s & 0xff);
  const lw = Math.ceil(width / 40);
  const lh = Math.ceil(height / 40);
  const low = new Uint8Array(lw * lh * 3).map(rnd);
  const smooth = await sharp(low, { raw: { width: lw, height: lh, channels: 3 } }).resize(width, height, { kernel: "cubic" }).raw().toBuffer();
  for (let i = 0; i < smooth.length; i++) smooth[i] = Math.max(0, Math.min(255, smooth[i] + ((rnd() & 31) - 16)));
  return new Uint8Array(await sharp(smooth, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer());
}
