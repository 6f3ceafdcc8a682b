import { Suspense } from "react";
import { Marketplace } from "@/components/console/marketplace/Marketplace";

export const metadata = { title: "Marketplace · svc" };
export default function Page() {
  // The search and filters are read from the URL (useSearchParams).
  return (
    <Suspense>
      <Marketplace />
    </Suspense>
  );
}
