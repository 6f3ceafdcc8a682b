import { notifyChange } from "../db/changes";
import type { Db } from "../db/client";

/** The change channel of approval requests (server/db/changes.ts), which the inbox follows. */
export const APPROVALS_CHANNEL = "approvals";

/** Tells the live views, once `tx` commits, that a request was created or moved. */
export function approvalChanged(tx: Db, a: { id: string; orgDid: string }): void {
  notifyChange(tx, { channel: APPROVALS_CHANNEL, org: a.orgDid, id: a.id });
}
