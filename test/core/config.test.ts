/**
 * Settings are declared by their owner (the kernel's in config.ts, each module's in its
 * settings.ts) and read by one reader: the operations guide's table matches the declarations,
 * and a module's bad setting is refused in the same list as the kernel's.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SERVICE_MODULES } from "../../src/app";
import { ConfigError, KERNEL_SETTINGS, loadConfig, moduleSettings } from "../../src/config";
import { settingsOf } from "../../src/kernel/module";
import { TACK_SETTINGS } from "../../src/services/tack/settings";
import { TRAWL_SETTINGS } from "../../src/services/trawl/settings";
import { leaves, type Setting } from "../../src/settings";

const ROOT = join(import.meta.dir, "../..");

/** docs/operations.md "Configuration": each row's variables and the default shown for each. */
function documented(): Map<string, string> {
  const md = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
  const section = md.slice(md.indexOf("## Configuration"), md.indexOf("\n## ", md.indexOf("## Configuration") + 1));
  const out = new Map<string, string>();
  for (const line of section.split("\n").filter((l) => l.startsWith("| `"))) {
    const [names, defaults] = line.split(" | ").map((c) => c.replace(/^\| /, ""));
    const vars = [...names!.matchAll(/`([A-Z][A-Z0-9_]*\*?)`/g)].map((m) => m[1]!);
    const parts = defaults!.split(", ");
    // "`200`, `600`, `30`" for three variables; one default for all of them otherwise.
    vars.forEach((v, i) => out.set(v, (parts.length === vars.length ? parts[i]! : defaults!).replaceAll("`", "")));
  }
  return out;
}

/** IDP_2_* documents IDP_2_ISSUER and its siblings. */
const covers = (doc: string, name: string) => (doc.endsWith("*") ? name.startsWith(doc.slice(0, -1)) : doc === name);

describe("docs/operations.md's settings table", () => {
  const declared: Setting<unknown>[] = [...leaves(KERNEL_SETTINGS), ...Object.values(settingsOf(SERVICE_MODULES)).flatMap(leaves)];
  const docs = documented();

  test("the table and the declarations are read (a row of several variables splits its defaults)", () => {
    expect(docs.get("TACK_RATE_READS")).toBe("600");
    expect(docs.get("IDP_2_*")).toBe("unset");
    expect(declared.map((s) => s.env).flat()).toEqual(expect.arrayContaining(["PORT", "TACK_RATE_BATCH", "TRAWL_CONCURRENCY", "WAITLIST_SIGNUPS_PER_IP_PER_MINUTE", "DNS_SERVERS"]));
  });

  test("every declared variable is documented with its default", () => {
    const wrong = declared.flatMap((s) =>
      s.env.flatMap((name) => {
        const doc = [...docs].find(([d]) => covers(d, name))?.[1];
        // The guide may add words after the default ("26214400 (25 MiB)").
        return doc !== undefined && doc.startsWith(s.default) ? [] : [`${name}: declared default "${s.default}", documented ${doc === undefined ? "nowhere" : `"${doc}"`}`];
      }),
    );
    expect(wrong).toEqual([]);
  });

  test("nothing is documented that is not declared", () => {
    const names = declared.flatMap((s) => s.env);
    expect([...docs.keys()].filter((d) => !names.some((n) => covers(d, n)))).toEqual([]);
  });
});

describe("module settings", () => {
  const modules = { tack: TACK_SETTINGS, trawl: TRAWL_SETTINGS };

  test("read with the kernel's, by module name, with their defaults", () => {
    const c = loadConfig({ TACK_RATE_WRITES: "0", LLM_MODEL: "small" }, modules);
    expect(c.settings.tack).toEqual({ writes: 0, reads: 600, batch: 30 });
    expect(c.settings.trawl).toEqual({ llmBaseUrl: null, llmApiKey: null, llmModel: "small", llmModelPro: "small", concurrency: 2 });
  });

  test("a module's bad setting is one more problem in the kernel's list", () => {
    let message = "";
    try {
      loadConfig({ PORT: "abc", TACK_RATE_READS: "-1", TRAWL_CONCURRENCY: "65" }, modules);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toBe(
      [
        "Invalid configuration:",
        '  - PORT must be an integer from 0 to 65535 (got "abc")',
        '  - TACK_RATE_READS must be an integer from 0 to 10000000 (got "-1")',
        '  - TRAWL_CONCURRENCY must be an integer from 1 to 64 (got "65")',
      ].join("\n"),
    );
  });

  test("a config read without a module's declaration still gives the module its settings (createApp reads them from its variables)", () => {
    const c = loadConfig({ TACK_RATE_BATCH: "7" });
    expect(c.settings).toEqual({});
    expect(moduleSettings(c, modules)).toEqual({ tack: { writes: 200, reads: 600, batch: 7 }, trawl: expect.objectContaining({ concurrency: 2 }) });
    expect(() => moduleSettings(loadConfig({ TACK_RATE_BATCH: "x" }), modules)).toThrow('TACK_RATE_BATCH must be an integer from 0 to 10000000 (got "x")');
  });

  test("bunker serve lists a module's problem with the kernel's, without a stack, and exits 2", () => {
    const r = Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), "serve"], {
      env: { PATH: process.env.PATH, PORT: "abc", TACK_RATE_WRITES: "x", DATA_DIR: "/nonexistent/never-made" },
    });
    const stderr = r.stderr.toString();
    expect(r.exitCode).toBe(2);
    expect(stderr).toContain('PORT must be an integer from 0 to 65535 (got "abc")');
    expect(stderr).toContain('TACK_RATE_WRITES must be an integer from 0 to 10000000 (got "x")');
    expect(stderr).not.toContain("    at ");
  });
});
