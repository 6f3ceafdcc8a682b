import { Overview } from "@/components/console/Overview";

export const metadata = { title: "Overview · svc" };
export default function Page() {
  return <Overview />;
}
