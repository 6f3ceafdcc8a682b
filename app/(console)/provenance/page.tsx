import { Provenance } from "@/components/console/Provenance";

export const metadata = { title: "Provenance · svc" };
export default function Page() {
  return <Provenance />;
}
