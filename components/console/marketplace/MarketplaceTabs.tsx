import Link from "next/link";
import { cn } from "@/components/ui/cn";

/** The marketplace's two views: the catalogue and the organization's installations. */
export function MarketplaceTabs({ current }: { current: "catalogue" | "installations" }) {
  const tab = (key: typeof current, href: string, label: string) => (
    <Link
      href={href}
      aria-current={current === key ? "page" : undefined}
      className={cn(
        "-mb-px border-b-2 px-3 py-2 text-sm font-medium",
        current === key
          ? "border-primary text-foreground"
          : "border-transparent text-muted-foreground hover:text-foreground",
      )}
    >
      {label}
    </Link>
  );
  return (
    <nav aria-label="Marketplace" className="mb-5 flex gap-1 border-b border-border">
      {tab("catalogue", "/marketplace", "Catalogue")}
      {tab("installations", "/marketplace/installations", "Installations")}
    </nav>
  );
}
