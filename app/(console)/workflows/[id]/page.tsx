import { WorkflowDetail } from "@/components/console/workflows/WorkflowDetail";

export const metadata = { title: "Workflow · svc" };
export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <WorkflowDetail id={id} />;
}
