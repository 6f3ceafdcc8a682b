import { ErrorTypes } from "@/components/docs/ErrorTypes";
import { composeServer } from "@/server/areas";
import { errorCodes, errorEntry } from "@/server/errorCatalogue";

export const metadata = { title: "Error types · svc" };

/** Generated from the error catalogue (the shared codes and the areas'): every problem's `type` link lands on its entry here. */
export default function ErrorTypesPage() {
  // A prerender at build time runs without the instrumentation hook: compose here (once per process).
  composeServer();
  const types = errorCodes().map((code) => {
    const entry = errorEntry(code);
    return {
      code,
      status: [entry.status, ...(entry.otherStatuses ?? [])].join(" / "),
      title: entry.title,
      meaning: entry.description,
      fix: entry.fix,
    };
  });
  return <ErrorTypes types={types} />;
}
