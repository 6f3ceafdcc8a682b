import { Suspense } from "react";
import { InstallationDetail } from "@/components/console/marketplace/InstallationDetail";

export const metadata = { title: "Installation · svc" };
export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  // Coming back from the provider's consent is read from the URL (useSearchParams).
  return (
    <Suspense>
      <InstallationDetail id={id} />
    </Suspense>
  );
}
