import { Playground } from "@/components/console/Playground";

export const metadata = { title: "Playground · svc" };
export default function Page() {
  return <Playground />;
}
