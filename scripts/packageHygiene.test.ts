import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

/** A fresh clone stays clean after `npm install`, and `engines` says the truth about what the dependencies need. */
const root = join(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
  dependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
};

/**
 * Packages that declare a newer Node than ours but that svc never runs, each with the reason.
 * Nothing else may: a dependency that needs a newer Node gets a version that fits, or `engines` moves.
 */
const NOT_RUN_BY_SVC: Record<string, string> = {
  "node_modules/@prisma/streams-local":
    "pulled by @prisma/dev for `prisma dev` (a local Prisma Postgres), which svc does not use",
};

describe("package hygiene", () => {
  it("every dependency in the lockfile accepts the oldest Node that engines admits", () => {
    const oldest = semver.minVersion(pkg.engines.node)!.version;
    const misfits = Object.entries(lock.packages)
      .filter(
        ([name, p]) =>
          name &&
          !(name in NOT_RUN_BY_SVC) &&
          !Array.isArray(p.engines) &&
          p.engines?.node &&
          !semver.satisfies(oldest, p.engines.node),
      )
      .map(
        ([name, p]) => `${name.replace(/^.*node_modules\//, "")} wants node ${(p.engines as { node: string }).node}`,
      );
    expect(misfits, `engines says node ${pkg.engines.node}`).toEqual([]);
    expect(
      semver.satisfies(process.version, pkg.engines.node),
      `this machine's ${process.version} is within engines`,
    ).toBe(true);
  });

  it("npm install would not rewrite package-lock.json (so npm ci and npm install agree)", () => {
    const r = spawnSync(process.execPath, [join(root, "scripts/check-lockfile.mjs")], {
      encoding: "utf8",
      timeout: 170_000,
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  }, 180_000);
});
