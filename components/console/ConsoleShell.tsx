"use client";

import { Activity, Building2, FileCode2, Fingerprint, KeyRound, LayoutDashboard, LogOut, Moon, Sun, Users } from "lucide-react";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { signOut } from "next-auth/react";
import { useTheme } from "next-themes";
import type { ReactNode } from "react";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Badge } from "@/components/ui/primitives";

const NAV = [
  { href: "/overview", label: "Overview", icon: LayoutDashboard },
  { href: "/organizations", label: "Organizations", icon: Building2 },
  { href: "/passports", label: "Passports", icon: Fingerprint },
  { href: "/keys", label: "API keys & delegations", icon: KeyRound },
  { href: "/provenance", label: "Provenance", icon: Activity },
  { href: "/members", label: "Members", icon: Users, admin: true },
  { href: "/docs/api", label: "API reference", icon: FileCode2 },
];

export function ConsoleShell({ name, role, did, children }: { name: string; role: string; did: string; children: ReactNode }) {
  const pathname = usePathname();
  const { resolvedTheme, setTheme } = useTheme();
  return (
    <div className="flex min-h-screen">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-card focus:p-2">
        Skip to content
      </a>
      <aside className="flex w-60 shrink-0 flex-col border-r border-border bg-card">
        <div className="flex items-center gap-2 px-5 py-4">
          <div className="grid h-7 w-7 place-items-center rounded-md bg-primary text-sm font-bold text-primary-foreground">s</div>
          <span className="font-semibold">svc console</span>
        </div>
        <nav aria-label="Console" className="flex-1 space-y-0.5 px-3">
          {NAV.filter((n) => !n.admin || role === "admin").map((n) => {
            const active = pathname.startsWith(n.href);
            return (
              <Link key={n.href} href={n.href} aria-current={active ? "page" : undefined} className={cn("flex items-center gap-2 rounded-md px-3 py-2 text-sm text-muted-foreground hover:bg-muted hover:text-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring", active && "bg-accent font-medium text-foreground")}>
                <n.icon className="h-4 w-4" aria-hidden />
                {n.label}
              </Link>
            );
          })}
        </nav>
        <div className="border-t border-border p-3">
          <div className="px-2 pb-2">
            <div className="truncate text-sm font-medium">{name}</div>
            <div className="flex items-center gap-2 pt-1">
              <Badge tone="primary">{role}</Badge>
              <span className="truncate font-mono text-[10px] text-muted-foreground" title={did}>
                {did.slice(0, 18)}…
              </span>
            </div>
          </div>
          <div className="flex gap-1">
            <Button variant="ghost" size="sm" aria-label="Toggle dark mode" onClick={() => setTheme(resolvedTheme === "dark" ? "light" : "dark")}>
              {resolvedTheme === "dark" ? <Sun className="h-4 w-4" /> : <Moon className="h-4 w-4" />}
            </Button>
            <Button variant="ghost" size="sm" onClick={() => void signOut({ callbackUrl: "/sign-in" })}>
              <LogOut className="h-4 w-4" aria-hidden /> Sign out
            </Button>
          </div>
        </div>
      </aside>
      <main id="main" className="min-w-0 flex-1 px-8 py-6">
        {children}
      </main>
    </div>
  );
}

export function PageHeader({ title, description, actions }: { title: string; description?: string; actions?: ReactNode }) {
  return (
    <div className="mb-6 flex items-start justify-between gap-4">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
        {description ? <p className="mt-1 text-sm text-muted-foreground">{description}</p> : null}
      </div>
      {actions}
    </div>
  );
}
