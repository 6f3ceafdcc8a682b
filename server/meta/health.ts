import { database } from "../db/client";
import { currentOutage, outageKind, reportOutage, RETRY_AFTER_SECONDS, type OutageKind } from "../db/outage";
import { migrationsPending, processNotReady, type NotReadyReason } from "./readinessChecks";

export const SERVICE_VERSION = "1.0.0";

/** GET /v1/health: unauthenticated and unrecorded (load balancers poll it); 503 when the database does not answer. */
export async function health(): Promise<Response> {
  let engine = "unknown";
  try {
    const db = await database();
    engine = db.engine;
    await db.read.serviceState.findFirst({ select: { key: true } });
    return Response.json({ status: "ok", version: SERVICE_VERSION, database: engine });
  } catch {
    return Response.json({ status: "unavailable", version: SERVICE_VERSION, database: engine }, { status: 503 });
  }
}

/**
 * GET /readyz: whether this process should be sent traffic. Not ready (503, with Retry-After)
 * while the database is unavailable or full (an outage under way, or the database does not
 * answer now), while the process drains (SIGTERM), while a migration this build ships is not
 * applied, or while its in-process worker has stopped ticking; ready (200) otherwise. /livez says
 * only that the process answers.
 */
export async function readiness(): Promise<Response> {
  const own = processNotReady();
  if (own) return notReady(own);
  const outage = currentOutage();
  if (outage) return notReady(outage.kind);
  try {
    const db = await database();
    await Promise.race([
      db.raw.query("SELECT 1"),
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error("Connection terminated: the database did not answer within 2 s")),
          2000,
        ).unref(),
      ),
    ]);
    if (await migrationsPending(db)) return notReady("migrations_pending");
    return Response.json({ status: "ready" });
  } catch (e) {
    const kind = outageKind(e) ?? "database_unavailable";
    reportOutage(kind, e);
    return notReady(kind);
  }
}

function notReady(kind: OutageKind | NotReadyReason): Response {
  const retryAfter = kind in RETRY_AFTER_SECONDS ? RETRY_AFTER_SECONDS[kind as OutageKind] : 5;
  return Response.json(
    { status: "not_ready", reason: kind },
    { status: 503, headers: { "Retry-After": String(retryAfter) } },
  );
}
