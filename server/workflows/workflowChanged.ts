import { notifyChange } from "../db/changes";
import type { Db } from "../db/client";

/** The change channel of workflows (server/db/changes.ts), which the console's live views follow. */
export const WORKFLOWS_CHANNEL = "workflows";

/** Tells the live views, once `tx` commits, that a workflow or one of its nodes changed. */
export function workflowChanged(tx: Db, w: { id: string; orgDid: string }): void {
  notifyChange(tx, { channel: WORKFLOWS_CHANNEL, org: w.orgDid, id: w.id });
}
