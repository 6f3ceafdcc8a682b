// ESLint keeps the shape of the code: which module may import which. `npm run lint`; `npm test`
// runs it as a suite, and a violation fails it.
//
// The module boundaries:
//
// 1. Nothing in server/ imports app/ or components/: the server does not know its pages.
// 2. components/ imports server code only as types (`import type`, e.g. the tRPC AppRouter) or
//    from a pure module (`server/<area>/schemas.ts`, `server/identity/capabilityCatalogue.ts`,
//    `server/http/listSchemas.ts`: plain zod, checked by schemasArePure.test.ts): never a service,
//    the database or anything that needs Node.js.
// 3. An area (server/<area>/) uses another area through its public modules. Public is every
//    module of the area except these three, each meant for one registry only:
//      - `router.ts`     the area's tRPC adapter: imported by server/trpc/ (the root router) only;
//      - `operations.ts` the area's declared actions: imported by server/http/ (the routing
//                        table), server/openapi/ and server/trpc/ only (and app/);
//      - `tasks.ts`      the area's background work: imported by server/worker/ only;
//    and anything in a folder named `internal/`. An area imports its own files freely.
//
// Patterns are regular expressions on the import path as written (`@/…` or relative).
import tseslint from "typescript-eslint";

// `@/server/<area>/` or a relative path leaving the importing area (`../<area>/`, `../../<area>/`).
const otherArea = String.raw`^(@/server/|(\.\./)+(server/)?)[A-Za-z0-9_-]+/`;

const noAppOrComponents = {
  regex: String.raw`^(@/|(\.\./)+)(app|components)(/|$)`,
  message: "server/ must not import app/ or components/ (eslint.config.mjs, rule 1).",
};
const registryOnly = (file, who) => ({
  regex: `${otherArea}${file}$`,
  message: `Another area's ${file}.ts is imported by ${who} only; use the area's services (eslint.config.mjs, rule 3).`,
});
const internal = { regex: `${otherArea}internal(/|$)`, message: "Another area's internal/ modules are its own (eslint.config.mjs, rule 3)." };

/** The patterns refused to server files, less the registries a folder is allowed to build. */
function serverPatterns({ routers = false, operations = false, tasks = false } = {}) {
  return [
    noAppOrComponents,
    internal,
    ...(routers ? [] : [registryOnly("router", "server/trpc/")]),
    ...(operations ? [] : [registryOnly("operations", "server/http/, server/openapi/ and server/trpc/")]),
    ...(tasks ? [] : [registryOnly("tasks", "server/worker/")]),
  ];
}

const restrict = (patterns) => ({ "@typescript-eslint/no-restricted-imports": ["error", { patterns }] });

export default tseslint.config(
  {
    ignores: ["node_modules/**", ".next/**", "server/db/generated/**", "prisma/generated/**", "test-results/**", "playwright-report/**", "e2e/screenshots/**", "bench/results/**", "next-env.d.ts"],
  },
  {
    files: ["**/*.{ts,tsx,mts,mjs,js}"],
    languageOptions: { parser: tseslint.parser, ecmaVersion: "latest", sourceType: "module" },
    plugins: { "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  { files: ["server/**/*.{ts,tsx}"], rules: restrict(serverPatterns()) },
  { files: ["server/trpc/**/*.{ts,tsx}"], rules: restrict(serverPatterns({ routers: true, operations: true })) },
  { files: ["server/http/**/*.{ts,tsx}", "server/openapi/**/*.{ts,tsx}"], rules: restrict(serverPatterns({ operations: true })) },
  { files: ["server/worker/**/*.{ts,tsx}"], rules: restrict(serverPatterns({ tasks: true })) },
  // Unit tests beside the code may reach into what they test.
  { files: ["server/**/*.test.ts"], rules: restrict([noAppOrComponents]) },
  {
    files: ["components/**/*.{ts,tsx}"],
    rules: restrict([
      {
        regex: String.raw`^(@/|(\.\./)+)server/(?!([A-Za-z0-9_-]+/schemas|identity/capabilityCatalogue|http/listSchemas|events/platformEventTypes)$)`,
        allowTypeImports: true,
        message: "components/ import server code as types only (`import type`), or a pure module: an area's schemas.ts, the capability catalogue (eslint.config.mjs, rule 2).",
      },
    ]),
  },
);
