import { Suspense } from "react";
import { Executions } from "@/components/console/Executions";

export const metadata = { title: "Executions · svc" };
export default function Page() {
  // The filters are read from the URL (useSearchParams).
  return (
    <Suspense>
      <Executions />
    </Suspense>
  );
}
