import { dispatchV1 } from "@/server/http/router";

/** The service's public keys, served by the same table as /v1 (headers, rate limit, 405s). */
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
