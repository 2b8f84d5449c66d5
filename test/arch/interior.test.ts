/**
 * The interior of a service (issue 31): feature folders, each feature's store private to it,
 * no cycles between features. Within services/<name>/, a feature is a folder directly under
 * it; the files at the service's root (module.ts, routes.ts, events.ts: the assembly) count
 * as one unit for store privacy and as one node each for cycles between features (a feature
 * may read the service's event declarations while the assembly imports every feature).
 * - No file imports another unit's store (`store.ts`, `store/*`, `*-store.ts`): other
 *   features call the feature's service or functions, so a store's rows and locks have one
 *   owner.
 * - The graph of features has no cycles: a feature can be read, tested and moved with what
 *   it builds on, never with what builds on it.
 * Every service is held to it; a feature publishes what the others use in its index.ts.
 */
import { describe, expect, test } from "bun:test";
import { cycles, importGraph } from "./import-graph";

const isStore = (rest: string) => rest === "store.ts" || rest.startsWith("store/") || /(^|\/)[\w-]*-store\.ts$/.test(rest);

interface Interior {
  /** `file -> store it imports` across units. */
  storeImports: string[];
  /** Cycles between features (root files as their own nodes). */
  cycles: string[][];
}

export function interior(graph: Map<string, string[]>, service: string): Interior {
  const base = `services/${service}/`;
  /** [unit for store privacy, node for cycles, path inside the unit] of a file of this service, else null. */
  const place = (file: string): [string, string, string] | null => {
    if (!file.startsWith(base)) return null;
    const parts = file.slice(base.length).split("/");
    if (parts.length === 1) return ["(root)", parts[0]!, parts[0]!];
    return [parts[0]!, `${parts[0]}/`, parts.slice(1).join("/")];
  };
  const storeImports: string[] = [];
  const features = new Map<string, Set<string>>();
  for (const [file, deps] of graph) {
    const from = place(file);
    if (!from) continue;
    for (const dep of deps) {
      const to = place(dep);
      if (!to) continue;
      if (from[0] !== to[0] && isStore(to[2])) storeImports.push(`${file} -> ${dep}`);
      // Cycles among root files alone are file cycles (imports.test.ts); here only features count.
      if (from[1] !== to[1] && !(from[0] === "(root)" && to[0] === "(root)")) {
        if (!features.has(from[1])) features.set(from[1], new Set());
        features.get(from[1])!.add(to[1]);
      }
    }
  }
  return { storeImports: storeImports.sort(), cycles: cycles(features) };
}

describe("the interior of each service", () => {
  const graph = importGraph();
  const services = [...new Set([...graph.keys()].filter((f) => f.startsWith("services/")).map((f) => f.split("/")[1]!))].sort();

  test("the rule sees a planted store import and a planted cycle", () => {
    const planted = new Map([
      ["services/x/a/service.ts", ["services/x/b/store.ts"]],
      ["services/x/b/store.ts", []],
      ["services/x/b/service.ts", ["services/x/c/service.ts", "services/x/b/store.ts"]],
      ["services/x/c/service.ts", ["services/x/b/service.ts"]],
      ["services/x/module.ts", ["services/x/a/service.ts", "services/x/a/detach-store.ts"]],
      ["services/x/a/detach-store.ts", []],
    ]);
    expect(interior(planted, "x")).toEqual({
      storeImports: ["services/x/a/service.ts -> services/x/b/store.ts", "services/x/module.ts -> services/x/a/detach-store.ts"],
      cycles: [["b/", "c/"]],
    });
  });

  for (const service of services) {
    test(`${service}: no feature imports another's store, no cycles between features`, () => {
      expect(interior(graph, service)).toEqual({ storeImports: [], cycles: [] });
    });
  }
});
