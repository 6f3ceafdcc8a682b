import { Models } from "@/components/console/Models";

export const metadata = { title: "Models · svc" };
export default function Page() {
  return <Models />;
}
