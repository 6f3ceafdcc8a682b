import { config } from "../config";
import { database, type Database } from "../db/client";
import { migrate } from "../db/migrate";
import { newId } from "../ids";
import { keyRing } from "../keys/signingKeys";
import { ledgerIdentity } from "../ledger/origin";
import { createInvite, setupPending } from "../members/sessions";

const ROOT_KEY = "root_org_did";

/**
 * First start, and every start after it: apply migrations, make sure the signing keys exist,
 * create the root organization once, and check the ledger's key (a process holding a key the
 * ledger never signed with stops here rather than fork the checkpoints). Safe to run from
 * several processes at the same time.
 */
export async function bootstrap(
  log: (line: string) => void = () => undefined,
): Promise<{ rootOrgDid: string; created: boolean }> {
  await migrate(log);
  await keyRing();
  const db = await database();
  const root = await ensureRootOrganization(db, log);
  await ledgerIdentity(db);
  return root;
}

const SETUP_LINK_KEY = "setup_link_valid_until";
const SETUP_LINK_HOURS = 24;

/**
 * While the root organization has no administrator, a one-time set-up link (valid 24 hours) lets
 * whoever opens it register the first administrator's passkey. `npx svc setup-link` (`fresh`)
 * makes a new one whenever asked. A starting process makes one only when no link made at a start
 * is still valid: one link per deployment, printed by the process that made it, not one per web
 * process of a fleet. The claim is a row of its own, so two processes starting together make one.
 */
export async function setupLinkIfPending(rootOrg: string, { fresh = false } = {}): Promise<string | undefined> {
  const db = await database();
  if (!(await setupPending(db, rootOrg))) return undefined;
  if (fresh)
    return (await db.writeTx((tx) => createInvite(tx, rootOrg, "admin", null, "setup", SETUP_LINK_HOURS))).link;
  const now = new Date();
  const until = new Date(now.getTime() + SETUP_LINK_HOURS * 3_600_000).toISOString();
  try {
    return await db.writeTx(async (tx) => {
      const claim = await tx.serviceState.findUnique({ where: { key: SETUP_LINK_KEY } });
      if (!claim) await tx.serviceState.create({ data: { key: SETUP_LINK_KEY, value: until } });
      else if (new Date(claim.value) > now) return undefined;
      else {
        // Expired: the first process to move the claim on makes the next link.
        const moved = await tx.serviceState.updateMany({
          where: { key: SETUP_LINK_KEY, value: claim.value },
          data: { value: until },
        });
        if (moved.count === 0) return undefined;
      }
      return (await createInvite(tx, rootOrg, "admin", null, "setup", SETUP_LINK_HOURS)).link;
    });
  } catch (e) {
    // Another process inserted the claim at the same moment: its link is the deployment's.
    if ((await db.read.serviceState.count({ where: { key: SETUP_LINK_KEY } })) > 0) return undefined;
    throw e;
  }
}

export async function rootOrgDid(db: Database): Promise<string | undefined> {
  const row = await db.read.serviceState.findUnique({ where: { key: ROOT_KEY } });
  return row?.value;
}

async function ensureRootOrganization(
  db: Database,
  log: (line: string) => void,
): Promise<{ rootOrgDid: string; created: boolean }> {
  const existing = await rootOrgDid(db);
  if (existing) return { rootOrgDid: existing, created: false };
  // The root organization is the deployment itself: it has no key pair anywhere, so its DID is
  // a deployment identifier rather than a did:key.
  const did = `did:svc:${newId("org").slice(4)}`;
  try {
    await db.writeTx(async (tx) => {
      await tx.serviceState.create({ data: { key: ROOT_KEY, value: did } });
      await tx.organization.create({
        data: { orgDid: did, name: process.env.SVC_ROOT_ORG_NAME || "Root organization", slug: "root", isRoot: true },
      });
    });
  } catch (e) {
    const winner = await rootOrgDid(db);
    if (winner) return { rootOrgDid: winner, created: false }; // another process created it first
    throw e;
  }
  log(`created the root organization ${did} (${config().engine})`);
  return { rootOrgDid: did, created: true };
}
