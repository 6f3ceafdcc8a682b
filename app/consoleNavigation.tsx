import * as lucide from "lucide-react";
import type { LucideIcon } from "lucide-react";
import type { ReactNode } from "react";
import { navigationFor } from "@/server/areas";
import type { Role } from "@/server/members/roles";

export interface ConsoleNavItem {
  href: string;
  label: string;
  /** The sidebar section it is listed under (server/areas.ts NAV_SECTIONS); none for the overview. */
  section?: string;
  icon: ReactNode;
}

/**
 * The console's navigation for a person of `role`, from the composition root's nav entries
 * (server/areas.ts), icons rendered here on the server so the browser gets only the ones shown.
 */
export function consoleNavigation(role: string): ConsoleNavItem[] {
  return navigationFor(role as Role).map((entry) => {
    // Any lucide-react export name, aliases included (`TriangleAlert`); a dot when the name is unknown.
    const Icon = (lucide as unknown as Record<string, LucideIcon | undefined>)[entry.icon] ?? lucide.Circle;
    return {
      href: entry.href,
      label: entry.label,
      section: entry.section,
      icon: <Icon className="h-4 w-4" aria-hidden />,
    };
  });
}
