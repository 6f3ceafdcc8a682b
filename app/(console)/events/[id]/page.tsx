import { EventDetail } from "@/components/console/EventDetail";

export const metadata = { title: "Event · svc" };
export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <EventDetail id={id} />;
}
