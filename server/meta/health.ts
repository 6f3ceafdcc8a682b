import { database } from "../db/client";

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
