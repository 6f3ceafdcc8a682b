import { Suspense } from "react";
import { Learning } from "@/components/console/Learning";

export const metadata = { title: "Learning · svc" };
export default function Page() {
  // The selected proposal is read from the URL (useSearchParams).
  return (
    <Suspense>
      <Learning />
    </Suspense>
  );
}
