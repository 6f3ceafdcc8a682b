import { readiness } from "@/server/meta/health";

/** Readiness: 503 while the database is unavailable or full, 200 otherwise (see server/meta/health.ts). */
export function GET(): Promise<Response> {
  return readiness();
}

export const dynamic = "force-dynamic";
