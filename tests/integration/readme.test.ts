import { execFile, execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "@/server/worker/worker";
import { useTestServer } from "./harness";
import { withSdkPackLock } from "./sdkPackLock";

/**
 * Every fenced block of README.md is preceded by a marker saying what the test does with it:
 *
 *   <!-- test: run -->                    run with bash (`set -euo pipefail`), must exit 0
 *   <!-- test: run; output: <regex> -->   and its stdout must match the regular expression
 *   <!-- test: skip (<reason>) -->        not run, for the reason given
 *
 * A block without a marker fails the test. Runnable blocks run in order, from the project's
 * directory as the README says, against a test server on this file's own DATA_DIR / DATABASE_URL
 * with the worker running. They take the server's address from `$SVC_URL` (here the test
 * server's) and write their files under `$WORK` (here a scratch directory), never into the
 * repository: the test fails if a block hard-codes localhost:3000 or leaves a file behind in the
 * project. `npx svc` runs bin/svc.mjs directly (npx's own start-up costs seconds); `$T` starts as
 * a root API key unless a block sets it.
 */
interface Block {
  line: number;
  lang: string;
  code: string;
  marker: { run: true; output?: RegExp } | { run: false; reason: string } | undefined;
}

export function readmeBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && !/^```\s*$/.test(lines[i]!)) body.push(lines[i]!);
    let j = start - 1;
    while (j >= 0 && lines[j]!.trim() === "") j--;
    const m = /^<!-- test: (run|skip)(.*)-->$/.exec(lines[j]?.trim() ?? "");
    let marker: Block["marker"];
    if (m?.[1] === "run") {
      const output = /^; output: (.*?)\s*$/.exec(m[2]!)?.[1];
      marker = { run: true, output: output ? new RegExp(output, "m") : undefined };
    } else if (m?.[1] === "skip") marker = { run: false, reason: /^ \((.+)\)\s*$/.exec(m[2]!)?.[1] ?? "" };
    blocks.push({ line: start + 1, lang: open[1]!, code: body.join("\n"), marker });
  }
  return blocks;
}

const readme = readFileSync(join(process.cwd(), "README.md"), "utf8");
const blocks = readmeBlocks(readme);
const ctx = useTestServer();
const scratch = mkdtempSync(join(tmpdir(), "svc-readme-"));
let worker: Worker;

/** What git sees as changed or new in the project (the README's snippets must add nothing to it). */
function projectChanges(): Set<string> {
  const out = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: process.cwd(),
    encoding: "utf8",
  });
  return new Set(out.split("\n").filter(Boolean));
}
let changesBefore: Set<string>;

beforeAll(() => {
  changesBefore = projectChanges();
  const bin = join(scratch, ".bin");
  rmSync(bin, { recursive: true, force: true });
  mkdirSync(bin);
  writeFileSync(
    join(bin, "npx"),
    `#!/bin/sh\nif [ "$1" = "svc" ]; then shift; exec "${process.execPath}" "${join(process.cwd(), "bin/svc.mjs")}" "$@"; fi\necho "the README test runs only npx svc, not npx $1" >&2; exit 127\n`,
  );
  chmodSync(join(bin, "npx"), 0o755);
  worker = startWorker({ log: () => undefined });
});
afterAll(async () => {
  await worker?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function bash(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    NODE_ENV: "test" as const,
    PATH: `${join(scratch, ".bin")}:${process.env.PATH}`,
    HOME: process.env.HOME,
    DATA_DIR: process.env.DATA_DIR,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    T: ctx.root.token,
    SVC_URL: ctx.server.url,
    WORK: scratch,
  };
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-c", `set -euo pipefail\n${script}`],
      { cwd: process.cwd(), env, timeout: 120_000 }, // npm pack builds the SDK (esbuild and tsc): slow on a loaded machine
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("README.md", () => {
  it("marks every fenced block as run or skip (with a reason)", () => {
    expect(blocks.length).toBeGreaterThan(3);
    for (const b of blocks) {
      expect(
        b.marker,
        `README.md line ${b.line}: a fenced block without <!-- test: run --> or <!-- test: skip (reason) -->`,
      ).toBeDefined();
      if (b.marker && !b.marker.run)
        expect(b.marker.reason, `README.md line ${b.line}: skip needs a reason`).not.toBe("");
    }
    expect(blocks.filter((b) => b.marker?.run).length).toBeGreaterThanOrEqual(3);
  });

  it("takes the server's address from $SVC_URL in every runnable snippet", () => {
    for (const b of blocks.filter((x) => x.marker?.run)) {
      const hardCoded = b.code
        .split("\n")
        .filter((l) => /localhost:3000/.test(l) && !/SVC_URL:-http:\/\/localhost:3000/.test(l));
      expect(hardCoded, `README.md line ${b.line}: use "$SVC_URL"`).toEqual([]);
    }
  });

  it("runs every runnable snippet against a real server, in order, leaving the project as it was", async () => {
    for (const b of blocks.filter((x) => x.marker?.run)) {
      // Packing the SDK rebuilds sdk/dist: it takes turns with the SDK's own test (sdkPackLock.ts).
      const r = /npm pack/.test(b.code) ? await withSdkPackLock(() => bash(b.code)) : await bash(b.code);
      const where = `README.md line ${b.line}:\n${b.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
      expect(r.code, where).toBe(0);
      const marker = b.marker as { run: true; output?: RegExp };
      if (marker.output) expect(r.stdout, where).toMatch(marker.output);
    }
    const left = [...projectChanges()].filter((c) => !changesBefore.has(c));
    expect(left, "files the README's snippets wrote into the project (write them under $WORK)").toEqual([]);
    // Every block has its own 30 s limit; together they take minutes on a loaded machine (the SDK's pack builds it).
  }, 300_000);
});

describe("the marker reader", () => {
  it("reads run, output and skip markers, and notices a missing one", () => {
    const parsed = readmeBlocks(
      "<!-- test: run; output: ^ok$ -->\n```sh\necho ok\n```\n\n<!-- test: skip (why) -->\n\n```text\nx\n```\n```js\n1\n```\n",
    );
    expect(parsed.map((b) => b.marker)).toEqual([
      { run: true, output: /^ok$/m },
      { run: false, reason: "why" },
      undefined,
    ]);
  });
});
