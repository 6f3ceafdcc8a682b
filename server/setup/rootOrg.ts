import type { Database } from "../db/client";

/**
 * The root organization's DID (the deployment's operator), read once: it never changes after
 * the first start. Undefined only before the first start finished.
 */
let cached: string | undefined;

export async function rootOrgDidOf(db: Database): Promise<string | undefined> {
  if (cached) return cached;
  const [row] = await db.raw.query<{ value: string }>(`SELECT "value" FROM "service_state" WHERE "key" = 'root_org_did'`);
  cached = row?.value;
  return cached;
}
