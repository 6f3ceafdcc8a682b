import { Suspense } from "react";
import { Benchmarks } from "@/components/console/Benchmarks";

export const metadata = { title: "Model benchmarks · svc" };
export default function Page() {
  // The window, the type over time and the compared models are read from the URL (useSearchParams).
  return (
    <Suspense>
      <Benchmarks />
    </Suspense>
  );
}
