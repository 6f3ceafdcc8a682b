import { ConnectorPage } from "@/components/console/marketplace/ConnectorPage";

export const metadata = { title: "Connector · svc" };
export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <ConnectorPage id={decodeURIComponent(id)} />;
}
