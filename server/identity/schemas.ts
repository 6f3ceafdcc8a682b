// Pure zod: the console's identity pages import these (schemasArePure.test.ts). They sit in one
// file per resource; this module gathers them so that /v1, the console (which may import only an
// area's schemas.ts, eslint.config.mjs rule 2) and the tests keep one import path. The order is the
// one they were declared in: the OpenAPI document lists components in the order their modules load.
export * from "./budgetSchemas";
export * from "./passportSchemas";
export * from "./sessionSchemas";
export * from "./delegationSchemas";
export * from "./revocationSchemas";
export * from "./capabilityMatchSchemas";
export * from "./apiKeySchemas";
export * from "./usageSchemas";
