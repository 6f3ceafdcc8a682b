import type { Task } from "../worker/registry";
import { computePromptAffinity } from "../prompts/computePromptAffinity";
import { proposeFromAffinity, type AffinitySource } from "./proposeFromAffinity";
import { proposeNarrowing } from "./proposeNarrowing";

/** How often the worker looks for proposals to make from affinity statistics (ms), SVC_LEARNING_SWEEP_MS. */
const SWEEP_MS = Number(process.env.SVC_LEARNING_SWEEP_MS || 3_600_000);

/** The prompts area's affinity report over the sweep's window. */
export const promptAffinitySource: AffinitySource = (db, orgDid, window) =>
  computePromptAffinity(db.read, orgDid, {
    engine: db.engine,
    windowDays: (window.to.getTime() - window.from.getTime()) / 86_400_000,
    now: window.to,
  });

/** The learning area's background work: its own proposals from prompt affinity and from delegations' usage. */
export const learningTasks: Task[] = [
  {
    name: "propose recommended models from prompt affinity",
    everyMs: SWEEP_MS,
    run: (db) => proposeFromAffinity(db, promptAffinitySource),
  },
  {
    name: "propose narrowing grants that hold capabilities they never use",
    everyMs: SWEEP_MS,
    run: (db) => proposeNarrowing(db),
  },
];
