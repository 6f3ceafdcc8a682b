import { Passports } from "@/components/console/Passports";

export const metadata = { title: "Passports · svc" };
export default function Page() {
  return <Passports />;
}
