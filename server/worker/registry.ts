import type { Database } from "../db/client";
import { processWide } from "../processWide";

/**
 * A periodic piece of background work, declared by the area whose tables it writes (its
 * `tasks.ts`); the worker only schedules it. `run` returns how many rows it handled (logged when
 * non-zero). Every task is idempotent, so several worker processes may run it at once.
 */
export interface Task {
  name: string;
  everyMs: number;
  run(db: Database): Promise<number>;
}

// The process's periodic tasks: the composition root (server/areas.ts) registers every area's.
const tasks = processWide("worker.tasks", () => new Map<string, Task>());

/** Adds a periodic task; called by the composition root only. Two tasks of one name are a programming error. */
export function registerTask(task: Task): void {
  if (tasks.has(task.name)) throw new TypeError(`A task named ${JSON.stringify(task.name)} is already registered`);
  tasks.set(task.name, task);
}

/** Every registered task, in registration order. */
export function registeredTasks(): Task[] {
  return [...tasks.values()];
}
