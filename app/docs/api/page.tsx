import { ApiReference } from "@/components/docs/ApiReference";

export const metadata = { title: "API reference · svc" };

export default function ApiReferencePage() {
  return <ApiReference />;
}
