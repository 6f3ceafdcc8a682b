import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The data model is split by area (Prisma's multi-file schema): prisma/schema/main.prisma holds
 * the generator and the datasource, and each other file is named for the area in server/ whose
 * services write its tables. scripts/prisma-generate.mjs and tests/integration/schemaDrift.test.ts
 * read every `.prisma` file of the folder.
 */
const dir = join(process.cwd(), "prisma/schema");
const files = readdirSync(dir).filter((f) => f.endsWith(".prisma"));
const text = (f: string) => readFileSync(join(dir, f), "utf8");
const blocks = (f: string, kind: string) =>
  [...text(f).matchAll(new RegExp(`^${kind} (\\w+) \\{`, "gm"))].map((m) => m[1]);

describe("prisma/schema/: the models split by area", () => {
  it("keeps the generator and the datasource in main.prisma, and no model there", () => {
    expect(files).toContain("main.prisma");
    expect(blocks("main.prisma", "generator")).toEqual(["client"]);
    expect(blocks("main.prisma", "datasource")).toEqual(["db"]);
    expect(blocks("main.prisma", "model")).toEqual([]);
  });

  it("names every other file for an area folder in server/, holding models and nothing else", () => {
    for (const f of files.filter((f) => f !== "main.prisma")) {
      expect(existsSync(join(process.cwd(), "server", f.replace(/\.prisma$/, ""))), f).toBe(true);
      expect(blocks(f, "model").length, f).toBeGreaterThan(0);
      expect([...blocks(f, "generator"), ...blocks(f, "datasource")], f).toEqual([]);
    }
  });

  it("declares each model once", () => {
    const models = files.flatMap((f) => blocks(f, "model"));
    expect(new Set(models).size).toBe(models.length);
  });
});
