import { openReader } from "./db";
import type { Server } from "./server";

/**
 * Number of provenance records, read straight from the database rather than through the API: a
 * governed read would itself add a record, and the count has to be exact.
 */
export async function countProvenance(server: Server): Promise<number> {
  const db = await openReader(server.databaseUrl);
  try {
    const [row] = await db.query<{ n: number | bigint | string }>(`SELECT count(*) AS n FROM "provenance_record"`);
    return Number(row?.n ?? Number.NaN);
  } finally {
    await db.close();
  }
}
