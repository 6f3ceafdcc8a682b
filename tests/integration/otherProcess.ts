// A second svc process on the same database (started through processScripts.ts): serves the same
// route files and prints its URL, so tests can prove what one process does another sees at once.
import { composeServer } from "@/server/areas";
import { startTestServer } from "./harness";

composeServer();
const server = await startTestServer();
process.stdout.write(`${server.url}\n`);
process.on("SIGTERM", () => process.exit(0));
