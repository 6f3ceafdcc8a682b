import { Suspense } from "react";
import { Passports } from "@/components/console/Passports";

export const metadata = { title: "Passports · svc" };
export default function Page() {
  // The passport shown (`?did=`) is read from the URL (useSearchParams).
  return (
    <Suspense>
      <Passports />
    </Suspense>
  );
}
