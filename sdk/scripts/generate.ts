import openapiTS, { astToString } from "openapi-typescript";

/**
 * The SDK's generated sources, from the OpenAPI document svc serves (GET /v1/openapi.json):
 * the types of every path, operation and schema (openapi-typescript, as
 * tests/integration/openapi.generated.ts) and the table of operation ids to method and path that
 * the named calls use at run time. `npm run sdk:generate` writes them (through
 * tests/integration/sdk.test.ts, which fails while the committed ones lag the document).
 */
export const SDK_GENERATED_DIR = "sdk/src/generated";

const HEADER = "// Generated from GET /v1/openapi.json: do not edit. Regenerate with `npm run sdk:generate`.\n\n";

const METHODS = ["get", "put", "post", "delete", "patch"] as const;

export async function sdkSources(doc: {
  paths: Record<string, Record<string, unknown>>;
}): Promise<Record<string, string>> {
  const types = HEADER + astToString(await openapiTS(structuredClone(doc) as never, { defaultNonNullable: false }));
  const routes: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as { operationId?: string } | undefined;
      if (op?.operationId) routes.push(`  ${op.operationId}: ["${method.toUpperCase()}", ${JSON.stringify(path)}],`);
    }
  }
  routes.sort();
  const table =
    HEADER +
    `/** Every operation of the document: its id, HTTP method and path template. */\nexport const ROUTES = {\n${routes.join("\n")}\n} as const;\n`;
  return { "openapi.ts": types, "routes.ts": table };
}
