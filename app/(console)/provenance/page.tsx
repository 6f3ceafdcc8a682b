import { Suspense } from "react";
import { Provenance } from "@/components/console/Provenance";
import { traceUrlTemplate } from "@/server/telemetry/tracing";

export const metadata = { title: "Provenance · svc" };
// SVC_TRACE_URL_TEMPLATE is read when the page is served, not when it is built.
export const dynamic = "force-dynamic";
export default function Page() {
  // The explorer reads its filters from the URL (useSearchParams).
  return (
    <Suspense>
      <Provenance traceUrlTemplate={traceUrlTemplate()} />
    </Suspense>
  );
}
