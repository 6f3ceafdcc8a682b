import { database } from "../db/client";
import { startJobWorker } from "../jobs";
import { noteOutage } from "../jobs/outage";
import { registeredTasks, type Task } from "./registry";

export interface Worker {
  stop(): Promise<void>;
}

/**
 * The background worker: runs each registered task (the areas' `tasks`, registered by the
 * composition root, server/areas.ts) on its interval,
 * and claims jobs of every registered kind from the durable queue (server/jobs/), until stopped.
 * Work is kept in the database, so stopping or restarting a worker loses nothing.
 */
export function startWorker({
  log,
  tasks = registeredTasks(),
  jobs = true,
}: {
  log: (line: string) => void;
  tasks?: readonly Task[];
  jobs?: boolean;
}): Worker {
  const jobWorker = jobs ? startJobWorker({ log }) : undefined;
  let stopped = false;
  const running = new Set<Promise<unknown>>();
  const timers = tasks.map((task) => {
    let busy = false;
    const tick = () => {
      // A slow round is never overlapped by the next tick of the same task.
      if (stopped || busy) return;
      busy = true;
      const p = database()
        .then((db) => task.run(db))
        .then((n) => n > 0 && log(`worker: ${task.name}: ${n}`))
        // An outage is logged once for all of it (server/db/outage.ts); the next tick tries again.
        .catch(
          (e: unknown) =>
            noteOutage(e) || log(`worker: ${task.name} failed: ${e instanceof Error ? e.message : String(e)}`),
        )
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    };
    tick();
    return setInterval(tick, task.everyMs);
  });
  return {
    async stop() {
      stopped = true;
      timers.forEach(clearInterval);
      await Promise.all([...running, jobWorker?.stop()]);
    },
  };
}
