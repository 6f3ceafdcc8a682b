import { Suspense } from "react";
import { Approvals } from "@/components/console/Approvals";

export const metadata = { title: "Approvals · svc" };
export default function Page() {
  // The request opened (`?id=`) is read from the URL (useSearchParams).
  return (
    <Suspense>
      <Approvals />
    </Suspense>
  );
}
