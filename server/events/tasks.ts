import type { BridgeHandler } from "../sandbox/bridge";
import { emitFromRun } from "./emitFromRun";

/** Where runs happen, their bundles get `ctx.events.emit`. */
export const eventBridgeEntries: Record<string, BridgeHandler> = { "events.emit": emitFromRun };
