// Pure zod: the console's reasoning pages (providers, playground, spend) import these. They sit in
// one file per resource; this module gathers them so that /v1, the console (which may import only
// an area's schemas.ts, eslint.config.mjs rule 2) and the tests keep one import path. The order is
// the one they were declared in: the OpenAPI document lists components in the order their modules
// load. (Benchmarks have their own, benchmarkSchemas.ts, imported directly.)
export * from "./thinkSchemas";
export * from "./modelSchemas";
export * from "./callSchemas";
export * from "./budgetSchemas";
export * from "./providerSchemas";
export * from "./routingRuleSchemas";
