import { Suspense } from "react";
import { Webhooks } from "@/components/console/Webhooks";

export const metadata = { title: "Webhooks · svc" };
export default function Page() {
  // The filters are read from the URL (useSearchParams).
  return (
    <Suspense>
      <Webhooks />
    </Suspense>
  );
}
