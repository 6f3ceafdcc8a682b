import { Agents } from "@/components/console/Agents";

export const metadata = { title: "Agents · svc" };
export default function Page() {
  return <Agents />;
}
