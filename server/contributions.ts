import type { ErrorEntry } from "./errorCatalogue";
import type { PlatformEventGroup } from "./events/platformEventTypes";
import type { CapabilityContribution } from "./identity/capabilityCatalogue";
import type { Role } from "./governance/roles";

/**
 * What an area contributes to the house's catalogues, declared in its own folder
 * (`server/<area>/contributions.ts`) and spread into its entry of the composition root
 * (server/areas.ts), which registers each part in `composeServer`. Pure data (types only here):
 * a new area adds none of this to a file outside its folder.
 */
export interface Contributions {
  /** Its capabilities (`svc_api:<area>:<action>`), with the capability areas they belong to. */
  capabilities?: CapabilityContribution;
  /** The platform event types it raises, each group with the capability that reads them. */
  platformEvents?: readonly PlatformEventGroup[];
  /** Its own error codes, with status, title and docs text (server/errorCatalogue.ts has the shared ones). */
  errors?: Readonly<Record<string, ErrorEntry>>;
  /** Label values whose metric series exist from the start (server/telemetry/metrics.ts, `seedMetricSeries`). */
  metricSeries?: { executionStatuses?: readonly string[] };
  /** Its pages in the console's navigation. */
  nav?: readonly NavEntry[];
}

/**
 * The sidebar's sections, in their order: twenty pages in one list were a wall of links that ran
 * past the bottom of a laptop's screen. An entry names its section; the navigation keeps the
 * root's order within a section.
 */
export const NAV_SECTIONS = ["Govern", "Run", "Connect", "Models", "Reference"] as const;
export type NavSection = (typeof NAV_SECTIONS)[number];

/** A console page in the navigation: who sees it, its section, and the lucide icon beside its label. */
export interface NavEntry {
  href: string;
  label: string;
  /** The sidebar section it is listed under; the overview alone has none (it heads the list). */
  section?: NavSection;
  /** A lucide-react icon name (`Bot`, `ListChecks`, …). */
  icon: string;
  /** The roles that see the entry; every role when absent (the approval inbox is an approver's page). */
  roles?: readonly Role[];
}
