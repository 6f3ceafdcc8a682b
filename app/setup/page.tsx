import { Register } from "@/components/console/Register";

export const metadata = { title: "Set up · svc" };

export default async function SetupPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  return <Register token={(await searchParams).token ?? ""} kind="setup" />;
}
