import { Suspense } from "react";
import { WebhookDetail } from "@/components/console/WebhookDetail";

export const metadata = { title: "Webhook · svc" };
export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  // The delivery log's event filter is read from the URL (useSearchParams).
  return (
    <Suspense>
      <WebhookDetail id={id} />
    </Suspense>
  );
}
