#!/usr/bin/env node
// `npm start`: build the console and API if the build is missing or older than the sources,
// then start the server (migrations, first-run set-up, console + API + worker on PORT).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { trimServerSourceMaps } from "./trim-server-source-maps.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const buildId = join(root, ".next/BUILD_ID");

function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let max = 0;
  for (const entry of readdirSync(path)) {
    if (entry === "node_modules" || entry === "generated" || entry.startsWith(".")) continue;
    max = Math.max(max, newest(join(path, entry)));
  }
  return max;
}

const sources = ["app", "components", "server", "public", "next.config.js", "package.json", "tsconfig.json"]
  .map((p) => join(root, p))
  .filter(existsSync);
const stale = !existsSync(buildId) || Math.max(...sources.map(newest)) > statSync(buildId).mtimeMs;
if (stale || process.env.SVC_FORCE_BUILD === "1") {
  console.log(
    "svc: building the console and API (next build), once after install or a change of the sources: " +
      "from under a minute on a quiet machine to several minutes on a busy 2-core one. Next.js prints its steps below.",
  );
  const started = Date.now();
  const r = spawnSync(process.execPath, [join(root, "node_modules/next/dist/bin/next"), "build"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
  const trimmed = trimServerSourceMaps();
  console.log(
    `svc: built in ${Math.round((Date.now() - started) / 1000)} s (${trimmed.files} server source maps trimmed of their sources); starting the server (migrations, then listening)…`,
  );
}
// `npm test` builds first on its own (`--build-only`), so that its report shows the build's time
// apart from the journeys'.
if (process.argv.includes("--build-only")) process.exit(0);
// V8 grows its heap lazily under load (RSS climbed past 500 MB in the benchmark with the
// defaults); a small young generation and a capped old space keep the server near 260 MB at the
// same throughput. SVC_MAX_HEAP_MB raises the cap for unusual workloads. The default was 256 MB
// until the whole Playwright run (25 minutes of journeys on one server) ended in "JavaScript heap
// out of memory" at that cap with this round's code: 512 MB until what grew is found (README,
// known limits).
const heap = [`--max-old-space-size=${Number(process.env.SVC_MAX_HEAP_MB || 512)}`, "--max-semi-space-size=4"];
// The server runs as a child; a signal sent to this process (a supervisor's or Kubernetes' SIGTERM
// reaches only the PID it started) is passed on, so the server drains (server/main.ts) instead of
// being orphaned, and this process exits as the server did.
const server = spawn(process.execPath, [...heap, "--import", "tsx", join(root, "server/main.ts")], {
  cwd: root,
  stdio: "inherit",
  env: { NODE_ENV: "production", ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
});
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"])
  process.on(signal, () => {
    if (server.exitCode === null && server.signalCode === null) server.kill(signal);
  });
server.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
