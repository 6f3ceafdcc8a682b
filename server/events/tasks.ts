import { registerBridgeEntry } from "../sandbox/bridge";
import type { Task } from "../worker/registry";
import { emitFromRun } from "./emitFromRun";

// Where runs happen, their bundles get `ctx.events.emit`.
registerBridgeEntry("events.emit", emitFromRun);

export const eventTasks: Task[] = [];
