#!/usr/bin/env node
// `npx svc …`: the operator's command line (migrate, API keys, signing keys). Runs the TypeScript
// sources through tsx, so the CLI and the server share one implementation.
import { register } from "tsx/esm/api";

register();
await import("../server/cli/main.ts");
