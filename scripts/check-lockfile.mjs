#!/usr/bin/env node
// Fails when `npm install` would rewrite package-lock.json (a fresh clone must stay clean after
// `npm install`, and `npm ci` must install exactly what `npm install` would). It resolves the
// committed package.json + package-lock.json in a scratch directory with this npm
// (`npm install --package-lock-only --ignore-scripts`, which touches no node_modules) and compares.
// Fix a failure with `npm install` and commit the lockfile it writes.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "svc-lockfile-"));
try {
  for (const f of ["package.json", "package-lock.json"]) copyFileSync(join(root, f), join(scratch, f));
  const r = spawnSync("npm", ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: scratch,
    encoding: "utf8",
  });
  if (r.status !== 0) {
    console.error(`check-lockfile: npm could not resolve the lockfile:\n${r.stderr}`);
    process.exit(2);
  }
  const before = readFileSync(join(root, "package-lock.json"), "utf8").split("\n");
  const after = readFileSync(join(scratch, "package-lock.json"), "utf8").split("\n");
  const first = before.findIndex((line, i) => line !== after[i]);
  if (first === -1 && before.length === after.length) {
    console.log("check-lockfile: package-lock.json is what `npm install` writes");
  } else {
    const at = first === -1 ? Math.min(before.length, after.length) : first;
    console.error(
      `check-lockfile: \`npm install\` (npm ${spawnSync("npm", ["--version"], { encoding: "utf8" }).stdout.trim()}) would rewrite package-lock.json from line ${at + 1}:`,
    );
    console.error(`  committed: ${before.slice(Math.max(0, at - 2), at + 3).join("\n             ")}`);
    console.error(`  npm writes: ${after.slice(Math.max(0, at - 2), at + 3).join("\n             ")}`);
    console.error("Run `npm install` and commit package-lock.json.");
    process.exit(1);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
