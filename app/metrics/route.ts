import { dispatchV1 } from "@/server/http/router";

/** GET /metrics through the one routing table (server/http/router.ts), answered as svc's own server answers it. */
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

export const dynamic = "force-dynamic";
