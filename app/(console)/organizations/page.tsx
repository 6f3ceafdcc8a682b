import { Organizations } from "@/components/console/Organizations";

export const metadata = { title: "Organizations · svc" };
export default function Page() {
  return <Organizations />;
}
