import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { ROOT } from "./server";

/**
 * A bench's own file run again as a child (`node --import tsx file ...args`) with an IPC channel:
 * the server modules keep one database and one configuration per process, so each engine or
 * queue worker under test gets a process of its own.
 */
export function spawnChild(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", file, ...args], {
    cwd: ROOT,
    // Its output is the bench's report: a log line per governed call would bury it (unless asked).
    env: { ...env, SVC_LOG_LEVEL: env.SVC_LOG_LEVEL || "warn" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/** Exit code of a child (128 when a signal ended it). */
export function exited(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? 128);
  return new Promise((resolve, reject) =>
    child.once("error", reject).once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1))),
  );
}

/** The next IPC message of the given type from a child; rejects if it exits first. */
export function message<T extends { type: string }>(child: ChildProcess, type: T["type"]): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (typeof m === "object" && m !== null && (m as { type?: unknown }).type === type) {
        child.off("message", onMessage).off("exit", onExit);
        resolve(m as T);
      }
    };
    const onExit = (code: number | null) => {
      child.off("message", onMessage);
      reject(new Error(`a bench child exited (${code}) before sending "${type}"`));
    };
    child.on("message", onMessage).once("exit", onExit);
  });
}

/**
 * The child side of `spawnChild`: when `self` is the script node was started with and `--child`
 * is among its arguments, runs `child` and exits 0, or prints `<name> failed: …` and exits 1.
 */
export async function runIfChild(self: string, name: string, child: () => Promise<void>): Promise<void> {
  if (process.argv[1] === undefined || resolve(process.argv[1]) !== self || !process.argv.includes("--child")) return;
  try {
    await child();
    process.exit(0);
  } catch (e) {
    console.error(`\n${name} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  }
}
