import { ExecutionDetail } from "@/components/console/ExecutionDetail";

export const metadata = { title: "Execution · svc" };
export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <ExecutionDetail id={id} />;
}
