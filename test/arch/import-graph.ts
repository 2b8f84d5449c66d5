/**
 * The import graph of src/ as the architecture tests read it: relative specifiers only,
 * type-only imports included (a cycle through types still ties the files together).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const SRC = join(import.meta.dir, "../../src");

/** import / export ... from "x", bare import "x" and import("x"), relative specifiers only. */
const IMPORT_RE = /(?:^|[\n;])\s*(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]*?\s+from\s+)?["'](\.[^"']*)["']|\bimport\(\s*["'](\.[^"']*)["']\s*\)/g;

function resolveSpec(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec);
  for (const c of [base, `${base}.ts`, join(base, "index.ts")]) if (c.endsWith(".ts") && existsSync(c)) return c;
  return null;
}

/** File -> the src/ files it imports (paths relative to src/). */
export function importGraph(src = SRC): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of new Bun.Glob("**/*.ts").scanSync(src)) {
    const abs = join(src, file);
    const deps = new Set<string>();
    for (const m of readFileSync(abs, "utf8").matchAll(IMPORT_RE)) {
      const target = resolveSpec(abs, (m[1] ?? m[2])!);
      if (target) deps.add(relative(src, target));
    }
    graph.set(file, [...deps]);
  }
  return graph;
}

/** Strongly connected components with more than one node (or a node importing itself): Tarjan. */
export function cycles(graph: Map<string, Iterable<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || [...(graph.get(v) ?? [])].includes(v)) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}
