import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Console forms import the area schemas and the capability catalogue (their enums, their
 * validation): what those modules import, transitively, must run in a browser. Only zod and
 * relative modules are allowed; never `node:*` or a server-only package.
 */
function importsOf(file: string): string[] {
  const source = readFileSync(file, "utf8");
  return [...source.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^;]*?from\s+["']([^"']+)["']/gm)].map((m) => m[1]!);
}

function closure(entry: string): { files: string[]; external: string[] } {
  const files = new Set<string>();
  const external = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of importsOf(file)) {
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec.endsWith(".ts") ? spec : `${spec}.ts`));
      else external.add(spec);
    }
  };
  visit(entry);
  return { files: [...files], external: [...external] };
}

describe("schemas the console imports are pure", () => {
  for (const entry of [
    "identity/schemas.ts",
    "identity/capabilityCatalogue.ts",
    "controlPlane/schemas.ts",
    "members/schemas.ts",
    "agents/schemas.ts",
    "executions/schemas.ts",
  ]) {
    it(entry, () => {
      const { external } = closure(join(__dirname, "..", entry));
      expect(external.filter((m) => m !== "zod")).toEqual([]);
    });
  }
});
