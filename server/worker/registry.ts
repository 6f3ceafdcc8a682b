import type { Database } from "../db/client";
import { agentTasks } from "../agents/tasks";
import { executionTasks } from "../executions/tasks";
import { eventTasks } from "../events/tasks";
import { complianceTasks } from "../compliance/tasks";
import { idempotencyTasks } from "../http/tasks";
import { ledgerTasks } from "../ledger/tasks";
import { memberTasks } from "../members/tasks";
import { webhookTasks } from "../webhooks/tasks";

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

/** Every area's background work: a new area adds one line here. */
export const tasks: readonly Task[] = [...ledgerTasks, ...complianceTasks, ...memberTasks, ...idempotencyTasks, ...agentTasks, ...executionTasks, ...webhookTasks, ...eventTasks];
