import { PROBLEM_TYPES } from "@/server/meta/problemTypes";
import { ErrorTypes } from "@/components/docs/ErrorTypes";

export const metadata = { title: "Error types · svc" };

export default function ErrorTypesPage() {
  return <ErrorTypes types={PROBLEM_TYPES} />;
}
