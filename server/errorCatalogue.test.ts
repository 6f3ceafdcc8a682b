import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { areas, registerContributions, type Area } from "./areas";
import { ERROR_CATALOGUE, errorCodes, errorEntry, isErrorCode, registerErrorCodes } from "./errorCatalogue";
import { domainError, DomainError, PasskeyRefused } from "./errors";

// The shared table and every area's own codes, as the composition root registers them.
registerContributions(Object.values(areas) as Area[]);

const root = join(__dirname, "..");

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" || e.name === "node_modules" ? [] : sources(path);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [path] : [];
  });
}

const files = [...sources("server"), ...sources("app")].map((path) => ({
  path,
  text: readFileSync(join(root, path), "utf8"),
}));

/** Every way a code is written in the code base: a raw DomainError, the catalogue factory, a problem built by hand. */
const CODE_PATTERNS = [
  /new DomainError\(\s*\d+\s*,\s*"([^"]+)"/g,
  /domainError\(\s*"([^"]+)"/g,
  /\brefused\([^;]*?,\s*\d+\s*,\s*"([^"]+)"\s*\)/g,
  /PasskeyRefused\([^;]*?,\s*\d+\s*,\s*"([^"]+)"\s*\)/g,
  /docs\/errors#"?\s*\+?\s*"([a-z_]+)"/g,
  /docs\/errors#([a-z_]+)/g,
];

describe("error catalogue", () => {
  it("has docs text, a title and an error status for every code, the areas' included", () => {
    expect(errorCodes()).toEqual(expect.arrayContaining(["not_found", "installation_not_active", "budget_exceeded"]));
    for (const code of errorCodes()) {
      const entry = errorEntry(code);
      expect(code).toMatch(/^[a-z][a-z_]*$/);
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.status, code).toBeLessThan(600);
      expect(entry.title.length, code).toBeGreaterThan(0);
      expect(entry.description.length, code).toBeGreaterThan(20);
      expect(entry.fix.length, code).toBeGreaterThan(10);
    }
  });

  it("covers every code thrown or answered anywhere in server/ and app/: a code no area declared fails here", () => {
    const found = new Map<string, string>();
    for (const { path, text } of files)
      for (const pattern of CODE_PATTERNS) for (const m of text.matchAll(pattern)) found.set(m[1]!, path);
    // The scan itself must see the codes we know are thrown, or it proves nothing.
    expect([...found.keys()]).toEqual(expect.arrayContaining(["no_checkpoint_yet", "invite_used", "counter_replayed"]));
    const missing = [...found].filter(([code]) => !isErrorCode(code)).map(([code, path]) => `${code} (${path})`);
    expect(missing).toEqual([]);
  });

  it("refuses a code declared twice, and answers no problem of a code nobody declared", () => {
    expect(() => registerErrorCodes({ not_found: errorEntry("not_found") })).toThrow(/declared twice/);
    expect(() =>
      registerErrorCodes({ installation_not_active: { ...errorEntry("installation_not_active"), title: "Other" } }),
    ).toThrow(/declared twice/);
    // @ts-expect-error: an undeclared code fails the type check too.
    expect(() => domainError("no_such_code", "x")).toThrow(/declared by no area/);
    expect(domainError("installation_not_active", "x").status).toBe(409);
  });

  it("lists every operation's extra problem codes in the catalogue", () => {
    for (const area of Object.values(areas) as Area[])
      for (const op of area.operations ?? [])
        for (const code of op.problems ?? []) expect(isErrorCode(code), `${op.id}: ${code}`).toBe(true);
  });

  it("leaves no inline about:blank problem in the code base", () => {
    const inline = files
      .filter(({ text }) => /type:\s*"about:blank"/.test(text))
      .map(({ path }) => relative(".", path));
    expect(inline).toEqual([]);
  });

  it("builds problems whose status and title come from the catalogue", () => {
    const e = domainError("no_checkpoint_yet", "x");
    expect(e).toBeInstanceOf(DomainError);
    expect([e.status, e.code, e.title]).toEqual([409, "no_checkpoint_yet", ERROR_CATALOGUE.no_checkpoint_yet.title]);
    expect(domainError("unauthenticated", "x").extra.remediation?.[0]?.step).toBe(1);
    expect(PasskeyRefused("x", 401).status).toBe(401);
    expect(PasskeyRefused("x", 410, "invite_used").code).toBe("invite_used");
  });
});
