import { newId } from "@/server/ids";
import { problemResponse } from "@/server/http/problem";

/** Any /v1 path no operation serves: a problem+json 404, never Next.js's HTML page. */
function notFound(request: Request): Response {
  const requestId = newId("req");
  const instance = new URL(request.url).pathname;
  return problemResponse({ type: "about:blank", title: "Not found", status: 404, detail: `No API route ${instance}. See /v1/openapi.json.`, instance, request_id: requestId }, { "X-Request-Id": requestId });
}

export { notFound as GET, notFound as POST, notFound as PATCH, notFound as PUT, notFound as DELETE };
