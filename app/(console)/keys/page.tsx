import { Keys } from "@/components/console/Keys";

export const metadata = { title: "API keys & delegations · svc" };
export default function Page() {
  return <Keys />;
}
