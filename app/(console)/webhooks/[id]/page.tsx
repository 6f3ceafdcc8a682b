import { Suspense } from "react";
import { WebhookDetail } from "@/components/console/WebhookDetail";
import { composeServer } from "@/server/areas";
import { platformEventCatalogue } from "@/server/events/platformEventTypes";

export const metadata = { title: "Webhook · svc" };
export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  composeServer();
  // A test event is never of a platform type: the form is told which patterns the areas reserve.
  const reserved = platformEventCatalogue().map((e) => e.pattern);
  // The delivery log's event filter is read from the URL (useSearchParams).
  return (
    <Suspense>
      <WebhookDetail id={id} reservedEventPatterns={reserved} />
    </Suspense>
  );
}
