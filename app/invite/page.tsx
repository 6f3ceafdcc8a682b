import { Register } from "@/components/console/Register";

export const metadata = { title: "Join · svc" };

export default async function InvitePage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  return <Register token={(await searchParams).token ?? ""} kind="invite" />;
}
