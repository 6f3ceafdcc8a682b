import type { Database } from "../db/client";

/**
 * The root organization's DID (the deployment's operator), read once: it never changes after
 * the first start. Undefined only before the first start finished.
 */
let cached: string | undefined;

export async function rootOrgDidOf(db: Database): Promise<string | undefined> {
  if (cached) return cached;
  const row = await db.read.serviceState.findUnique({ where: { key: "root_org_did" }, select: { value: true } });
  cached = row?.value;
  return cached;
}
