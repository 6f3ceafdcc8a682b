import { Suspense } from "react";
import { Workflows } from "@/components/console/workflows/Workflows";

export const metadata = { title: "Workflows · svc" };
export default function Page() {
  // The filter is read from the URL (useSearchParams).
  return (
    <Suspense>
      <Workflows />
    </Suspense>
  );
}
