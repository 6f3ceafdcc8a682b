import { Suspense } from "react";
import { Events } from "@/components/console/Events";

export const metadata = { title: "Events · svc" };
export default function Page() {
  // The type filter is read from the URL (useSearchParams).
  return (
    <Suspense>
      <Events />
    </Suspense>
  );
}
