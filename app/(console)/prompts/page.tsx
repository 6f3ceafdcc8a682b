import { Suspense } from "react";
import { Prompts } from "@/components/console/Prompts";

export const metadata = { title: "Prompts · svc" };
export default function Page() {
  // The prompt shown is read from the URL (`?key=`, useSearchParams).
  return (
    <Suspense>
      <Prompts />
    </Suspense>
  );
}
