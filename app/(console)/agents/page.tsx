import { Suspense } from "react";
import { Agents } from "@/components/console/Agents";

export const metadata = { title: "Agents · svc" };
export default function Page() {
  // The agent opened (`?agent=`) is read from the URL (useSearchParams).
  return (
    <Suspense>
      <Agents />
    </Suspense>
  );
}
