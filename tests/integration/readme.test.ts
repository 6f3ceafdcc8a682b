import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { resetConfig } from "@/server/config";
import { reloadCatalogue } from "@/server/marketplace/catalogue";
import { forgetDiscoveredModels } from "@/server/reasoning/discoverModels";
import { forgetRoutingCatalogue } from "@/server/reasoning/routingCatalogue";
import { resetReasoningSettings } from "@/server/reasoning/settings";
import { startWorker, type Worker } from "@/server/worker/worker";
import { useTestServer } from "./harness";
import { withSdkPackLock } from "./sdkPackLock";

/**
 * Every fenced block of README.md is preceded by a marker saying what the test does with it:
 *
 *   <!-- test: run -->                    run, must succeed
 *   <!-- test: run; output: <regex> -->   and its stdout must match the regular expression
 *   <!-- test: skip (<reason>) -->        not run, for the reason given
 *
 * A block without a marker fails the test. Runnable blocks run as a user runs them: in order, in
 * ONE bash session (`set -euo pipefail`) started in the project's directory, so a block that
 * changes directory, or relies on a variable or function no earlier block set, fails here as it
 * would for them. The session runs against a test server on this file's own DATA_DIR /
 * DATABASE_URL with the worker running; blocks take the server's address from `$SVC_URL` (here
 * the test server's) and write their files under `$WORK` (here a scratch directory), never into
 * the repository: the test fails if a block hard-codes localhost:3000 or leaves a file behind in
 * the project. `npx` is the real one, with every install from a registry refused (an unreachable
 * registry, offline, an empty cache, no prompt): `npx svc` resolves the project's own bin only
 * from the project's directory, and a block that reaches a package outside the project (`npx svc`
 * run from elsewhere would fetch an unrelated package named `svc`) fails. `$T` starts as a root
 * API key until the quick start mints its own.
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

/**
 * The error answers a block quotes in its comments (`# → 4xx …` and its `#   ` continuation
 * lines): each double-quoted text, cut at every `…` (what the quote leaves out), must be in what
 * the block printed, so a quoted refusal cannot drift from the live one.
 */
export function quotedErrorTexts(code: string): string[] {
  const lines = code.split("\n");
  const texts: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*#\s*→\s*[45]\d\d\b/.test(lines[i]!)) continue;
    let comment = lines[i]!.replace(/^\s*#\s*→\s*/, "");
    while (i + 1 < lines.length && /^\s*# {3}/.test(lines[i + 1]!))
      comment += " " + lines[++i]!.replace(/^\s*# {3}/, "");
    for (const m of comment.matchAll(/"((?:[^"\\]|\\.)*)"/g))
      for (const part of m[1]!.split("…").map((p) => p.trim()))
        if (part.length >= 3) texts.push(part.replace(/\s+/g, " "));
  }
  return texts;
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

/** A free loopback port for the README's demo model provider, which the server is configured with. */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
let demoModelPort: number;
/** The README's demo OAuth provider's port, and where its connector definition is copied with that port. */
let demoOAuthPort: number;
const connectorsDir = join(scratch, "connectors");

beforeAll(async () => {
  changesBefore = projectChanges();
  // What the README tells the user to start svc with for its demo model provider (Reasoning).
  demoModelPort = await freePort();
  // And for its demo connector (Marketplace): the example definition as shipped, only its port
  // moved to a free one; svc's public URL is the test server's, where the provider sends the
  // browser back.
  demoOAuthPort = await freePort();
  mkdirSync(connectorsDir, { recursive: true });
  writeFileSync(
    join(connectorsDir, "demo-oauth.json"),
    readFileSync(join(process.cwd(), "examples/connectors/demo-oauth.json"), "utf8").replaceAll(
      "127.0.0.1:11436",
      `127.0.0.1:${demoOAuthPort}`,
    ),
  );
  process.env.SVC_CONNECTORS_DIR = connectorsDir;
  process.env.SVC_PUBLIC_URL = ctx.server.url;
  process.env.SVC_OUTBOUND_ALLOW = [
    process.env.SVC_OUTBOUND_ALLOW,
    `127.0.0.1:${demoModelPort}`,
    `127.0.0.1:${demoOAuthPort}`,
  ]
    .filter(Boolean)
    .join(",");
  process.env.SVC_MODEL_PROVIDERS = JSON.stringify([
    {
      name: "demo",
      kind: "openai-compatible",
      base_url: `http://127.0.0.1:${demoModelPort}/v1`,
      models: [
        { model_id: "local-small", input_cost_per_million: 0.1, output_cost_per_million: 0.2 },
        { model_id: "local-large", input_cost_per_million: 2, output_cost_per_million: 6 },
      ],
    },
  ]);
  resetConfig();
  resetReasoningSettings();
  forgetDiscoveredModels();
  forgetRoutingCatalogue();
  reloadCatalogue();
  worker = startWorker({ log: () => undefined });
});
afterAll(async () => {
  delete process.env.SVC_MODEL_PROVIDERS;
  delete process.env.SVC_CONNECTORS_DIR;
  delete process.env.SVC_PUBLIC_URL;
  resetConfig();
  reloadCatalogue();
  resetReasoningSettings();
  await worker?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The environment of the user's shell: the real npx, which may not install anything. */
function shellEnv(): NodeJS.ProcessEnv {
  return {
    NODE_ENV: "test",
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: process.env.DATA_DIR,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    T: ctx.root.token,
    SVC_URL: ctx.server.url,
    WORK: scratch,
    DEMO_MODEL_PORT: String(demoModelPort),
    DEMO_OAUTH_PORT: String(demoOAuthPort),
    npm_config_registry: "http://127.0.0.1:9/",
    npm_config_offline: "true",
    npm_config_yes: "false",
    npm_config_cache: join(scratch, ".npm-cache"),
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
  };
}

/**
 * One bash session fed one block at a time: each block is sourced from a file, its stdout and
 * stderr to files of its own, and the session says when it is done. Under `set -e` a failing
 * block ends the session, which is how its failure is seen.
 */
function shellSession() {
  const dir = join(scratch, ".blocks");
  mkdirSync(dir, { recursive: true });
  // Its own process group, so that closing it also stops what a block left running (the demo provider).
  const child = spawn("bash", ["--noprofile", "--norc"], { cwd: process.cwd(), env: shellEnv(), detached: true });
  let exited: number | null = null;
  let seen = "";
  const waiters = new Set<() => void>();
  child.stdout.on("data", (d: Buffer) => {
    seen += d.toString();
    for (const w of waiters) w();
  });
  child.stderr.on("data", (d: Buffer) => (seen += d.toString()));
  child.on("exit", (code, signal) => {
    exited = code ?? (signal ? 128 : 1);
    for (const w of waiters) w();
  });
  child.stdin.write("set -euo pipefail\n");
  return {
    async run(i: number, code: string, timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
      const file = (ext: string) => join(dir, `${i}.${ext}`);
      writeFileSync(file("sh"), code + "\n");
      const done = `__readme_block_done_${i}__`;
      if (exited === null)
        child.stdin.write(`source '${file("sh")}' </dev/null >'${file("out")}' 2>'${file("err")}'; echo ${done}\n`);
      const finished = await new Promise<boolean>((resolve) => {
        const check = () => {
          if (seen.includes(done)) finish(true);
          else if (exited !== null) finish(false);
        };
        const timer = setTimeout(() => finish(false), timeoutMs);
        const finish = (ok: boolean) => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(ok);
        };
        waiters.add(check);
        check();
      });
      const read = (ext: string) => {
        try {
          return readFileSync(file(ext), "utf8");
        } catch {
          return "";
        }
      };
      if (!finished && exited === null) child.kill("SIGKILL");
      return {
        code: finished ? 0 : (exited ?? 124),
        stdout: read("out"),
        stderr: read("err") + (finished ? "" : `\n(session: ${exited === null ? "timed out" : `exited ${exited}`})`),
      };
    },
    close() {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // the group has ended
      }
    },
  };
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

  it("runs every runnable snippet in one shell, in order, against a real server, leaving the project as it was", async () => {
    const shell = shellSession();
    try {
      for (const b of blocks.filter((x) => x.marker?.run)) {
        // A block has two minutes (npm pack builds the SDK: esbuild and tsc, slow on a loaded
        // machine); packing takes turns with the SDK's own test (sdkPackLock.ts).
        const r = /npm pack/.test(b.code)
          ? await withSdkPackLock(() => shell.run(b.line, b.code, 120_000))
          : await shell.run(b.line, b.code, 120_000);
        const where = `README.md line ${b.line}:\n${b.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
        expect(r.code, where).toBe(0);
        const marker = b.marker as { run: true; output?: RegExp };
        if (marker.output) expect(r.stdout, where).toMatch(marker.output);
        const printed = r.stdout.replace(/\s+/g, " ");
        for (const quoted of quotedErrorTexts(b.code))
          expect(
            printed.includes(quoted),
            `${where}\n--- the quoted error text not in the live answer: ${quoted}`,
          ).toBe(true);
      }
    } finally {
      shell.close();
    }
    const left = [...projectChanges()].filter((c) => !changesBefore.has(c));
    expect(left, "files the README's snippets wrote into the project (write them under $WORK)").toEqual([]);
  }, 600_000);

  it("runs npx so that a package from outside the project cannot be reached", () => {
    // From $WORK, `npx svc` is not the project's bin: it must fail rather than fetch a package.
    let failed = false;
    try {
      execFileSync("npx", ["svc", "--help"], { cwd: scratch, env: shellEnv(), stdio: "pipe", timeout: 60_000 });
    } catch (e) {
      failed = true;
      expect(String((e as { stderr?: Buffer }).stderr)).toMatch(
        /ENOTCACHED|canceled|could not determine executable|404|ECONNREFUSED/,
      );
    }
    expect(failed, "npx svc from outside the project must not run anything").toBe(true);
  });
});

describe("the quoted error reader", () => {
  it("takes each quoted text of a quoted 4xx/5xx answer, cut at the ellipses, across continuation lines", () => {
    expect(
      quotedErrorTexts(
        'curl x\n# → 400 … "errors":[{"code":"INVALID_VALUE","message":"The URL must\n#   use https …"}]\n# → 200 {"ok":"yes"}',
      ),
    ).toEqual(["errors", "code", "INVALID_VALUE", "message", "The URL must use https"]);
  });
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
