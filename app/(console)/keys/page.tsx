import { Keys } from "@/components/console/Keys";
import { composeServer } from "@/server/areas";
import { capabilityGroups } from "@/server/identity/capabilityCatalogue";

export const metadata = { title: "API keys & delegations · svc" };
export default function Page() {
  // The picker offers what the composition root's areas declared and check (registered by composeServer).
  composeServer();
  return <Keys capabilityGroups={capabilityGroups()} />;
}
