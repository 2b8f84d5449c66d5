/**
 * The import graph of src/: no cycles, and dependencies point one way (core <- access <-
 * kernel <- services; the kernel knows no product, and each kernel room is entered through
 * its index.ts only). Type-only imports count: a cycle through types still ties the files
 * together.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { SERVICE_MODULES } from "../../src/app";
import { cycles, importGraph, SRC } from "./import-graph";

describe("import graph of src/", () => {
  const graph = importGraph();

  test("the walker sees the imports (type-only ones included) and finds a planted cycle", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get("app.ts")).toContain("config.ts");
    // `import type { AppContext } from "../../context"`
    expect(graph.get("services/platform/service.ts")).toContain("context.ts");
    expect(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c"]]);
    expect(cycles(new Map([["a", ["a"]]]))).toEqual([["a"]]);
  });

  test("has no import cycles", () => {
    expect(cycles(graph)).toEqual([]);
  });

  const importsUnder = (from: string, to: string[]) =>
    [...graph].flatMap(([file, deps]) => (file.startsWith(from) ? deps.filter((d) => to.some((t) => d.startsWith(t))).map((d) => `${file} -> ${d}`) : []));

  test("core imports nothing from access/ or services/; access nothing from services/", () => {
    expect(importsUnder("core/", ["access/", "services/", "app.ts"])).toEqual([]);
    expect(importsUnder("access/", ["services/", "app.ts"])).toEqual([]);
  });

  const folders = (dir: string) => readdirSync(join(SRC, dir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);

  test("every service folder is a mounted module: the product list is SERVICE_MODULES", () => {
    const names = SERVICE_MODULES.map((m) => m.name);
    expect(folders("services").filter((f) => !names.includes(f))).toEqual([]);
    // The walker sees the product folders it checks below.
    expect(names.filter((n) => existsSync(join(SRC, "services", n))).length).toBeGreaterThan(5);
  });

  test("the kernel knows no product and no service imports app.ts", () => {
    const products = SERVICE_MODULES.map((m) => `services/${m.name}/`);
    expect(importsUnder("kernel/", [...products, "services/", "app.ts"])).toEqual([]);
    expect(importsUnder("services/", ["app.ts"])).toEqual([]);
  });

  test("a kernel room is entered through its index.ts (or the module contract, kernel/module.ts)", () => {
    const rooms = folders("kernel");
    expect(rooms).toEqual(expect.arrayContaining(["tenancy", "webhooks"]));
    const deep = [...graph].flatMap(([file, deps]) =>
      deps.filter((d) => rooms.some((r) => d.startsWith(`kernel/${r}/`) && !file.startsWith(`kernel/${r}/`) && d !== `kernel/${r}/index.ts`)).map((d) => `${file} -> ${d}`),
    );
    expect(deep).toEqual([]);
    // The walker resolves a room's index (app.ts builds the engine from it).
    expect(graph.get("app.ts")).toContain("kernel/webhooks/index.ts");
  });
});
