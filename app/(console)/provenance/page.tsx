import { Suspense } from "react";
import { Provenance } from "@/components/console/Provenance";

export const metadata = { title: "Provenance · svc" };
export default function Page() {
  // The explorer reads its filters from the URL (useSearchParams).
  return (
    <Suspense>
      <Provenance />
    </Suspense>
  );
}
