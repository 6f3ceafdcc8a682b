import { dispatchV1 } from "@/server/http/router";

/**
 * Every /v1 path, through the one routing table (server/http/router.ts) that svc's own server
 * also uses: operations, 404s and 405s answer identically on both transports. Optional, so that
 * `/v1` itself and paths Next.js normalizes to it (`/v1/passports/%2e%2e`) get the table's 404 too.
 */
const handler = (request: Request) => dispatchV1(request);

export {
  handler as GET,
  handler as POST,
  handler as PATCH,
  handler as PUT,
  handler as DELETE,
  handler as HEAD,
  handler as OPTIONS,
};
