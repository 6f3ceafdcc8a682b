/**
 * @svc/sdk: the typed client of svc's /v1 API, generated from its OpenAPI document.
 *
 *   const svc = createSvcClient({ baseUrl: "https://svc.example.com", token: process.env.SVC_TOKEN });
 *   const passport = await svc.ops.getPassport({ path: { did } });         // by operation id
 *   const same = await svc.GET("/v1/passports/{did}", { path: { did } });   // by path
 *   for await (const p of svc.paginate("listPassports")) console.log(p.did); // every page
 */
export {
  createSvcClient,
  SvcClient,
  type CallOptions,
  type ItemOf,
  type ListOperationId,
  type NamedOperations,
  type OperationId,
  type RequestOptions,
  type RetryOptions,
  type SuccessOf,
  type SvcClientOptions,
} from "./client.js";
export { SvcProblemError, SvcVerificationError, type SvcFieldError, type SvcProblem } from "./errors.js";
export { verifyWebhook, type VerifiedWebhook } from "./webhooks.js";
export { verifyRecordInclusion, type InclusionProof } from "./proofs.js";
export type { components, operations, paths } from "./generated/openapi.js";

/** A schema of the document by name: `Schema<"Passport">`. */
export type Schema<N extends keyof import("./generated/openapi.js").components["schemas"]> =
  import("./generated/openapi.js").components["schemas"][N];
