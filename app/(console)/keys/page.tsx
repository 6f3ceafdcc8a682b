import { Keys } from "@/components/console/Keys";
import { offeredCapabilityAreas } from "@/server/areas";
import { capabilityGroups } from "@/server/identity/capabilityCatalogue";

export const metadata = { title: "API keys & delegations · svc" };
export default function Page() {
  // The picker offers what the composition root's areas check, nothing of areas not built yet.
  return <Keys capabilityGroups={capabilityGroups(offeredCapabilityAreas)} />;
}
