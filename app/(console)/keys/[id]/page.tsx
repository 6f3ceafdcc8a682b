import { Suspense } from "react";
import { KeyDetail } from "@/components/console/KeyDetail";

export const metadata = { title: "API key · svc" };
export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  // The usage window (`?days=`) is read from the URL (useSearchParams).
  return (
    <Suspense>
      <KeyDetail id={id} />
    </Suspense>
  );
}
