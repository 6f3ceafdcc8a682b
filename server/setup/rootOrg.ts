import type { Database } from "../db/client";
import { processWide } from "../processWide";

/**
 * The root organization's DID (the deployment's operator), read once: it never changes after
 * the first start. Undefined only before the first start finished.
 */
const cached = processWide("setup.rootOrgDid", () => ({ did: undefined as string | undefined }));

export async function rootOrgDidOf(db: Database): Promise<string | undefined> {
  if (cached.did) return cached.did;
  const row = await db.read.serviceState.findUnique({ where: { key: "root_org_did" }, select: { value: true } });
  cached.did = row?.value;
  return cached.did;
}
