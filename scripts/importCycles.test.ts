import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../tests/integration/sourceFiles";

/**
 * The server's modules import one way: pages and routers → the composition root → areas →
 * shared mechanisms. A cycle (the worker's registry ↔ each area's tasks.ts, or events → triggers
 * → invoke → run → platform events → events) makes the order modules load in decide what works;
 * registries and the event bus's dispatchers break them. Type-only imports count too: a type
 * that two folders need belongs to the lower one.
 */
const ROOT = process.cwd();

function serverFiles(): string[] {
  return sourceFiles(join(ROOT, "server"), (name) => /\.(ts|mts|mjs)$/.test(name) && !/\.test\./.test(name));
}

function resolveImport(from: string, spec: string): string | undefined {
  const base = spec.startsWith("@/")
    ? join(ROOT, spec.slice(2))
    : spec.startsWith(".")
      ? resolve(dirname(from), spec)
      : undefined;
  if (!base) return undefined;
  return [base, `${base}.ts`, `${base}.mts`, `${base}.mjs`, join(base, "index.ts")].find(
    (p) => existsSync(p) && !p.endsWith("/"),
  );
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of serverFiles()) {
    const source = readFileSync(file, "utf8");
    const specs = [
      ...[...source.matchAll(/^(?:import|export)\s+[^;]*?\bfrom\s+["']([^"']+)["']/gm)].map((m) => m[1]!),
      ...[...source.matchAll(/^import\s+["']([^"']+)["']/gm)].map((m) => m[1]!),
      ...[...source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!),
    ];
    graph.set(
      file,
      specs.map((s) => resolveImport(file, s)).filter((p): p is string => p !== undefined && !readdirSafe(p)),
    );
  }
  return graph;
}

const readdirSafe = (p: string) => {
  try {
    readdirSync(p);
    return true;
  } catch {
    return false;
  }
};

/** Strongly connected components of more than one module (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        component.push(relative(ROOT, w));
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

describe("the server's imports", () => {
  it("have no cycles", () => {
    expect(cycles(importGraph())).toEqual([]);
  });

  it("the check finds a cycle when there is one", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(cycles(graph)).toEqual([["a", "b", "c"].map((f) => relative(ROOT, f))]);
  });
});
