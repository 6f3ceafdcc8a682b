import { Approvals } from "@/components/console/Approvals";

export const metadata = { title: "Approvals · svc" };
export default function Page() {
  return <Approvals />;
}
