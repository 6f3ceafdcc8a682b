import { Suspense } from "react";
import { Spend } from "@/components/console/Spend";

export const metadata = { title: "Spend · svc" };
export default function Page() {
  // The window is read from the URL (useSearchParams).
  return (
    <Suspense>
      <Spend />
    </Suspense>
  );
}
