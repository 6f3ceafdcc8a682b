import { ErrorTypes } from "@/components/docs/ErrorTypes";
import { ERROR_CODES, errorEntry } from "@/server/errorCatalogue";

export const metadata = { title: "Error types · svc" };

/** Generated from the error catalogue: every problem's `type` link lands on its entry here. */
export default function ErrorTypesPage() {
  const types = ERROR_CODES.map((code) => {
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
