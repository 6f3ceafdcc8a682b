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
//    module of the area except these, each meant for the composition root (`server/areas.ts`)
//    only, which names every area once:
//      - `router.ts` and any `…Router.ts`          the area's tRPC adapters;
//      - `operations.ts` and any `…Operations.ts`  the area's declared actions (app/ and the
//                                                  OpenAPI document get them through the root);
//      - `tasks.ts` and any `…Tasks.ts`            the area's background work (job kinds,
//                                                  periodic tasks, bridge entries);
//    and anything in a folder named `internal/`. An area imports its own files freely.
// 4. The kernel imports no area and not the root: the shared mechanisms (server/http/, trpc/,
//    openapi/, jobs/, worker/, governance/, sandbox/), what they stand on (db, keys, signing,
//    outbound, meta, telemetry) and the two areas the gate itself is made of, identity (who
//    calls) and provenance (the record, with its ledger). Where the kernel needs the areas, the
//    entry points (server/main.ts, app/ route files, the CLI, the worker's main.ts) compose the
//    root and hand it down, or the root fills a registry (`composeServer` in server/areas.ts):
//    the /v1 operations, the tRPC router, revocation and issuance hooks, job kinds.
//
// Patterns are regular expressions on the import path as written (`@/…` or relative).
import tseslint from "typescript-eslint";

// `@/server/<area>/` or a relative path leaving the importing area (`../<area>/`, `../../<area>/`).
const otherArea = String.raw`^(@/server/|(\.\./)+(server/)?)[A-Za-z0-9_-]+/`;

const noAppOrComponents = {
  regex: String.raw`^(@/|(\.\./)+)(app|components)(/|$)`,
  message: "server/ must not import app/ or components/ (eslint.config.mjs, rule 1).",
};
// `router` also matches `benchmarkRouter`: an area may split its adapters into several files.
const registryOnly = (file, who) => ({
  regex: `${otherArea}([A-Za-z0-9_]*${file[0].toUpperCase()}|${file[0]})${file.slice(1)}$`,
  message: `Another area's ${file}.ts (or …${file[0].toUpperCase()}${file.slice(1)}.ts) is imported by ${who} only; use the area's services (eslint.config.mjs, rule 3).`,
});
const internal = {
  regex: `${otherArea}internal(/|$)`,
  message: "Another area's internal/ modules are its own (eslint.config.mjs, rule 3).",
};

/** The patterns refused to server files, less the registries the composition root builds. */
function serverPatterns({ root = false } = {}) {
  return [
    noAppOrComponents,
    internal,
    ...(root
      ? []
      : [
          registryOnly("router", "the composition root (server/areas.ts)"),
          registryOnly("operations", "the composition root (server/areas.ts)"),
          registryOnly("tasks", "the composition root (server/areas.ts)"),
        ]),
  ];
}

// What the kernel may import besides its own folder: the kernel's other modules (rule 4). Not the
// root (`areas`, `appRouter`), not an area, and of server/setup only the root organization (its
// bootstrap, run by the entry points, creates the first member's invitation).
const KERNEL = [
  "processWide",
  "config",
  "errors",
  "errorCatalogue",
  // The shape of an area's contributions (types, and the navigation's sections): pure.
  "contributions",
  "ids",
  "db",
  "keys",
  "signing",
  "outbound",
  "setup/rootOrg",
  "meta",
  "identity",
  "provenance",
  // The provenance ledger's Merkle tree, proofs and checkpoints.
  "ledger",
  "http",
  "jobs",
  "worker",
  "governance",
  "sandbox",
  "trpc",
  "openapi",
  // server/telemetry: traces, metrics, logs (issue 20): a mechanism every layer calls into.
  "telemetry",
];
// The kernel's folders, held to rule 4.
const KERNEL_FOLDERS = KERNEL.filter(
  (k) => !/^(processWide|config|errors|errorCatalogue|contributions|ids|setup\/.*)$/.test(k),
);
const noArea = {
  regex: String.raw`^(@/server/|(\.\./)+(server/)?)(?!(${KERNEL.join("|")})(/|$))[A-Za-z0-9_-]+(/|$)`,
  message:
    "The kernel (server/http, trpc, openapi, jobs, worker, governance, sandbox, db, identity, provenance, ledger, …) imports no area and not the composition root: the entry points compose the root and hand it down, or the root fills a registry (eslint.config.mjs, rule 4).",
};

const restrict = (patterns) => ({ "@typescript-eslint/no-restricted-imports": ["error", { patterns }] });

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      ".next/**",
      "server/db/generated/**",
      "prisma/generated/**",
      "test-results/**",
      "playwright-report/**",
      "e2e/screenshots/**",
      "bench/results/**",
      "next-env.d.ts",
      "dist/**",
      "sdk/dist/**",
      "sdk/src/generated/**",
    ],
  },
  {
    files: ["**/*.{ts,tsx,mts,mjs,js}"],
    languageOptions: { parser: tseslint.parser, ecmaVersion: "latest", sourceType: "module" },
    plugins: { "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  { files: ["server/**/*.{ts,tsx}"], rules: restrict(serverPatterns()) },
  { files: ["server/areas.ts"], rules: restrict(serverPatterns({ root: true })) },
  {
    files: [`server/{${KERNEL_FOLDERS.join(",")}}/**/*.{ts,tsx}`],
    // The worker's main.ts is an entry point: it composes the root.
    ignores: ["**/*.test.ts", "server/worker/main.ts"],
    rules: restrict([...serverPatterns(), noArea]),
  },
  // Unit tests beside the code may reach into what they test.
  { files: ["server/**/*.test.ts"], rules: restrict([noAppOrComponents]) },
  {
    files: ["components/**/*.{ts,tsx}"],
    rules: restrict([
      {
        regex: String.raw`^(@/|(\.\./)+)server/(?!([A-Za-z0-9_-]+/schemas|identity/capabilityCatalogue|http/listSchemas|events/platformEventTypes)$)`,
        allowTypeImports: true,
        message:
          "components/ import server code as types only (`import type`), or a pure module: an area's schemas.ts, the capability catalogue (eslint.config.mjs, rule 2).",
      },
    ]),
  },
);
