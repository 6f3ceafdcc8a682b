import { spawn, type ChildProcess } from "node:child_process";
import { logLineSays } from "@/server/telemetry/log";
import { killProcessGroups } from "./processes";
import { nodeArgs } from "./processScripts";

/**
 * svc processes for the drain and scale-out tests: web processes (tests/integration/webProcess.ts,
 * server/main.ts's /v1, /livez, /readyz and drain without Next.js's pages) and worker processes
 * (server/worker/main.ts, what `npm run worker` runs), on the test file's database, each under
 * tsx in a process group of its own, its output kept for the failure message.
 */
export interface SvcProcess {
  child: ChildProcess;
  /** The web process's URL; undefined for a worker. */
  url?: string;
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>;
}

// The tests' load is not an abuse: lifted unless a test sets its own.
const UNLIMITED = { SVC_RATE_LIMIT_PER_MINUTE: "100000000", SVC_RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000000" };
// No load balancer probes these processes: they stop at once unless a test asks for a delay.
const NO_PROBE = { SVC_DRAIN_DELAY_MS: "0" };

export async function startSvcProcess(
  kind: "web" | "worker",
  env: Record<string, string>,
  all: SvcProcess[],
): Promise<SvcProcess> {
  const child = spawn(process.execPath, nodeArgs(kind === "web" ? "webProcess" : "worker"), {
    env: { ...process.env, NODE_ENV: "test", SVC_SANDBOX_THREADS: "1", ...UNLIMITED, ...NO_PROBE, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  const proc: SvcProcess = { child, output: () => out, exited };
  all.push(proc);
  proc.url = await new Promise<string | undefined>((resolve, reject) => {
    const look = (d: Buffer) => {
      out += d.toString();
      if (kind === "worker" && out.split("\n").some((l) => logLineSays(l, "svc-worker", "running"))) resolve(undefined);
      const line = out.split("\n").find((l) => l.startsWith("http://"));
      if (kind === "web" && line) resolve(line.trim());
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", look);
    void exited.then((code) => reject(new Error(`the ${kind} process exited (${code}) before it was up:\n${out}`)));
  });
  return proc;
}

/** SIGKILLs the process group of every process still running (afterAll). */
export function killAll(all: SvcProcess[]): void {
  killProcessGroups(all.map((p) => p.child));
}
