/**
 * The guides run as tests: every ```sh block of README.md and of each guide docs/README.md
 * lists, in order, against the binary (scripts/guides/run.ts; one test per document). First
 * the runner's own rules, on test/bin/fixtures/guide-rules.md and small variants of it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultGuides, type GuideResult, requireJq, ROOT, runGuide } from "../../scripts/guides/run";
import { recordRoutes, requireBinary } from "../helpers/binary";

const binary = requireBinary();
requireJq();
const work = mkdtempSync(join(tmpdir(), "bunker-guides-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const fixture = readFileSync(join(ROOT, "test/bin/fixtures/guide-rules.md"), "utf8");
const START = "<!-- guide: start -->\n```sh\nBUNKER_ADMIN_EMAIL=ada@example.com BUNKER_ADMIN_PASSWORD='correct horse battery' npm start\n```\n";

/** Runs a markdown text as a guide (written to a file of this test's folder). */
function run(name: string, markdown: string, timeoutMs = 120_000): Promise<GuideResult> {
  const file = join(work, name);
  writeFileSync(file, markdown);
  return runGuide(file, { binary, timeoutMs });
}

const T = 150_000;

/** Whether a process runs (a zombie awaiting its reaper does not). */
function running(pid: number): boolean {
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
  return stat !== "" && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

describe("the guide runner's rules", () => {
  test("the fixture passes: variables carry, an expected 403 passes on 403, not-run blocks are skipped and listed", async () => {
    const r = await run("rules.md", fixture);
    expect(r.failure).toBeUndefined();
    expect(r.ok).toBe(true);
    // start, the sign-in block, the 403 block, the last block (the not-run and text blocks skipped)
    expect(r.ran).toBe(4);
    expect(r.notRun).toEqual([{ line: 29, reason: "the fixture's block a reader may run but CI cannot" }]);
    expect(r.transcript).toContain('"code":"FORBIDDEN"');
    expect(r.transcript).toMatch(/carried: [0-9a-f-]{36}/);
    expect(r.transcript).not.toContain("a text block is never run");
  }, T);

  test("a curl answered with an error status fails the guide, naming the line and the command", async () => {
    const r = await run("failing.md", `${START}\n\`\`\`sh\necho first\ncurl -s http://localhost:8080/platform/v1/workspaces \\\n  -H 'authorization: Bearer nope'\necho never-printed\n\`\`\`\n`);
    expect(r.ok).toBe(false);
    expect(r.failure).toContain("failing.md:8: this command failed");
    expect(r.failure).toContain("$ curl -s http://localhost:");
    expect(r.failure).toContain("HTTP 401 from GET");
    expect(r.transcript).toMatch(/^first$/m);
    expect(r.transcript).not.toMatch(/^never-printed$/m);
  }, T);

  test("an expected status must be exactly that status", async () => {
    const r = await run("expected.md", `${START}\n\`\`\`sh\ncurl -s http://localhost:8080/healthz   # 403 FORBIDDEN\n\`\`\`\n`);
    expect(r.ok).toBe(false);
    expect(r.failure).toContain("expected.md:7: this command failed");
    expect(r.failure).toContain("expected HTTP 403, got 200");
  }, T);

  test("a failing command of any kind fails its block, and background jobs end with the document", async () => {
    const pidFile = join(work, "background.pid");
    const r = await run("background.md", `${START}\n\`\`\`sh\nsleep 600 &\necho $! > ${pidFile}\ntest -f /no/such/file\n\`\`\`\n`);
    expect(r.ok).toBe(false);
    expect(r.failure).toContain("background.md:9: this command failed\n  $ test -f /no/such/file");
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(pid).toBeGreaterThan(0);
    expect(running(pid)).toBe(false);
  }, T);

  test("a document gives up at its timeout, naming the block", async () => {
    const r = await run("slow.md", `${START}\n\`\`\`sh\nsleep 600\n\`\`\`\n`, 5_000);
    expect(r.ok).toBe(false);
    expect(r.failure).toContain("slow.md:6: timed out after 5 s");
  }, T);

  test("mistakes in the rules fail before anything runs", async () => {
    const allNotRun = await run("not-run.md", "<!-- guide: not run: needs Docker -->\n```sh\ndocker run bunker\n```\n");
    expect(allNotRun.ok).toBe(false);
    expect(allNotRun.failure).toContain("no block runs");
    expect(allNotRun.notRun).toEqual([{ line: 2, reason: "needs Docker" }]);

    const mistakes = await run(
      "mistakes.md",
      `${START}\n\`\`\`bash\necho hi\n\`\`\`\n\n\`\`\`sh\nX=$(curl -s http://localhost:8080/nope)   # 404 NOT_FOUND\n\`\`\`\n<!-- guide: sometimes -->\n`,
    );
    expect(mistakes.ok).toBe(false);
    expect(mistakes.failure).toContain("mistakes.md: line 6: a ```bash block: use ```sh");
    expect(mistakes.failure).toContain("mistakes.md:11: an expected status (# 404) only goes on a plain `curl ...` command");
    expect(mistakes.failure).toContain('unknown directive "sometimes"');
    expect(mistakes.ran).toBe(0);
  }, T);
});

describe("the guides run as written", () => {
  for (const file of defaultGuides()) {
    test(file, async () => {
      expect(existsSync(join(ROOT, file))).toBe(true);
      // The routes a guide reached count for test:bin's report, like any test's.
      const r = await runGuide(file, { binary, beforeStop: (base, vars) => recordRoutes(base, vars.METRICS_TOKEN) });
      if (!r.ok) throw new Error(`${r.failure}`);
      expect(r.ran).toBeGreaterThan(1);
    }, 330_000);
  }
});
