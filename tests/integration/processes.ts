import { spawn, type ChildProcess } from "node:child_process";
import { nodeArgs, type ProcessScript } from "./processScripts";

/**
 * Starts `script` (processScripts.ts) in a new process (NODE_ENV=test plus `env`) and
 * resolves with the URL it prints; rejects, naming it `name`, if it exits first. `detached` gives
 * it its own process group (for killProcessGroups); `children` collects it as soon as it starts.
 */
export async function startServingProcess(
  script: ProcessScript,
  opts: {
    env?: Record<string, string>;
    detached?: boolean;
    stderr?: "ignore" | "inherit";
    name?: string;
    children?: ChildProcess[];
  } = {},
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, nodeArgs(script), {
    env: { ...process.env, NODE_ENV: "test", ...opts.env },
    stdio: ["ignore", "pipe", opts.stderr ?? "ignore"],
    ...(opts.detached ? { detached: true } : {}),
  });
  opts.children?.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.startsWith("http://"));
      if (line) resolve(line.trim());
    });
    child.on("exit", (code) => reject(new Error(`${opts.name ?? "the process"} exited with ${code}`)));
  });
  return { url, child };
}

/** Kills the process group of each child still running (SIGKILL): the process and everything it started. */
export function killProcessGroups(children: ChildProcess[]): void {
  for (const c of children)
    if (c.exitCode === null && c.signalCode === null)
      try {
        process.kill(-c.pid!, "SIGKILL");
      } catch {
        // already gone between the check and the kill
      }
}

/** Resolves once every child has exited (a killed process holds its files, and their locks, until then). */
export async function exited(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map((c) =>
      c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.once("exit", r)),
    ),
  );
}
