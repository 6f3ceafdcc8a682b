import { Suspense } from "react";
import { Installations } from "@/components/console/marketplace/Installations";

export const metadata = { title: "Installations · svc" };
export default function Page() {
  // The status filter is read from the URL (useSearchParams).
  return (
    <Suspense>
      <Installations />
    </Suspense>
  );
}
