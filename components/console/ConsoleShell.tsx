"use client";

import * as DialogPrimitive from "@radix-ui/react-dialog";
import { ChevronDown, LogOut, Menu, Moon, Sun, X } from "lucide-react";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { signOut } from "next-auth/react";
import { useTheme } from "next-themes";
import { createContext, useContext, useEffect, useId, useRef, useState, type ReactNode } from "react";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Badge } from "@/components/ui/primitives";
import { Did } from "./Did";
import { PendingApprovalsBadge } from "./PendingApprovalsBadge";

/** One page in the sidebar: the layout builds them from the composition root's nav entries (server/areas.ts), for the person's role. */
export interface NavItem {
  href: string;
  label: string;
  /** Its section's heading in the sidebar; the entries come grouped by section, in order. */
  section?: string;
  icon: ReactNode;
}

/** The entries in runs of the same section, in order. */
function bySection(nav: NavItem[]): { section: string | undefined; items: NavItem[] }[] {
  const groups: { section: string | undefined; items: NavItem[] }[] = [];
  for (const n of nav) {
    const last = groups.at(-1);
    if (last && last.section === n.section) last.items.push(n);
    else groups.push({ section: n.section, items: [n] });
  }
  return groups;
}

const RoleContext = createContext<string>("viewer");

/**
 * The signed-in person's console role. Controls their role cannot use are not shown at all (the
 * gate would refuse them anyway, but only after the person had filled in a form).
 */
export function useConsoleRole(): string {
  return useContext(RoleContext);
}

/** Write actions of the console's tRPC procedures are for administrators (server/trpc/init.ts `adminProcedure`). */
export function useCanAdminister(): boolean {
  return useConsoleRole() === "admin";
}

export function Brand() {
  return (
    <Link
      href="/overview"
      className="flex items-center gap-2 rounded-md focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
    >
      <span
        className="grid h-7 w-7 place-items-center rounded-md bg-primary text-sm font-bold text-primary-foreground"
        aria-hidden
      >
        s
      </span>
      <span className="font-semibold">svc console</span>
    </Link>
  );
}

/**
 * The theme toggle. Both icons are rendered and CSS shows the one for the current theme: the
 * server cannot know the theme, so rendering by `resolvedTheme` made the client's first render
 * differ from the server's (React error #418 in dark mode).
 */
export function ThemeToggle() {
  const { resolvedTheme, setTheme } = useTheme();
  return (
    <Button
      variant="ghost"
      size="sm"
      aria-label="Toggle dark mode"
      onClick={() => setTheme(resolvedTheme === "dark" ? "light" : "dark")}
    >
      <Sun className="hidden h-4 w-4 dark:block" aria-hidden />
      <Moon className="h-4 w-4 dark:hidden" aria-hidden />
    </Button>
  );
}

/** Whether the element scrolls and has more below what shows, kept up as it scrolls and resizes. */
function useMoreBelow<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [more, setMore] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const check = () => setMore(el.scrollHeight - el.scrollTop - el.clientHeight > 4);
    check();
    el.addEventListener("scroll", check, { passive: true });
    const observer = new ResizeObserver(check);
    observer.observe(el);
    return () => {
      el.removeEventListener("scroll", check);
      observer.disconnect();
    };
  }, []);
  return { ref, more };
}

function Sidebar({
  nav,
  name,
  role,
  did,
  onNavigate,
}: {
  nav: NavItem[];
  name: string;
  role: string;
  did: string;
  onNavigate?: () => void;
}) {
  const pathname = usePathname();
  // The drawer and the sidebar may both be in the page: each copy's section ids are its own.
  const idPrefix = useId();
  const { ref: navRef, more } = useMoreBelow<HTMLElement>();
  return (
    <>
      <nav ref={navRef} aria-label="Console" className="relative flex-1 overflow-y-auto px-3 pb-2">
        {bySection(nav).map(({ section, items }) => (
          <div key={section ?? "home"} className={section ? "pt-3" : undefined}>
            {section ? (
              <div
                id={`${idPrefix}-${section.toLowerCase()}`}
                className="px-3 pb-1 text-xs font-medium uppercase tracking-wide text-muted-foreground"
              >
                {section}
              </div>
            ) : null}
            <ul className="space-y-0.5" aria-labelledby={section ? `${idPrefix}-${section.toLowerCase()}` : undefined}>
              {items.map((n) => {
                const active = pathname.startsWith(n.href);
                return (
                  <li key={n.href}>
                    <Link
                      href={n.href}
                      onClick={onNavigate}
                      aria-current={active ? "page" : undefined}
                      className={cn(
                        "flex items-center gap-2 rounded-md px-3 py-1.5 text-sm text-muted-foreground hover:bg-muted hover:text-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring",
                        active && "bg-accent font-medium text-foreground",
                      )}
                    >
                      {n.icon}
                      {n.label}
                      {n.href === "/approvals" ? <PendingApprovalsBadge /> : null}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </div>
        ))}
        {/* On a short screen the last entries are below the fold: say that the list scrolls. */}
        {more ? (
          <div
            className="pointer-events-none sticky bottom-0 -mx-3 -mb-2 flex h-10 items-end justify-center bg-gradient-to-t from-card via-card/90 to-transparent pb-1 text-xs text-muted-foreground"
            data-testid="nav-more"
            aria-hidden
          >
            <ChevronDown className="h-3.5 w-3.5" /> more
          </div>
        ) : null}
      </nav>
      <div className="border-t border-border p-3">
        <div className="px-2 pb-2">
          <div className="truncate text-sm font-medium">{name}</div>
          <div className="flex min-w-0 items-center gap-2 pt-1">
            <Badge tone="primary">{role}</Badge>
            <Did value={did} truncate />
          </div>
        </div>
        <div className="flex gap-1">
          <ThemeToggle />
          <Button variant="ghost" size="sm" onClick={() => void signOut({ callbackUrl: "/sign-in" })}>
            <LogOut className="h-4 w-4" aria-hidden /> Sign out
          </Button>
        </div>
      </div>
    </>
  );
}

/**
 * The console's frame: a sidebar from 768 px up; below that a top bar whose menu button opens the
 * same navigation in a drawer (a Radix dialog: focus trapped, Escape closes, focus returns).
 */
export function ConsoleShell({
  nav,
  name,
  role,
  did,
  children,
}: {
  nav: NavItem[];
  name: string;
  role: string;
  did: string;
  children: ReactNode;
}) {
  const [menuOpen, setMenuOpen] = useState(false);
  return (
    <RoleContext.Provider value={role}>
      <div className="min-h-screen md:flex">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-card focus:p-2"
        >
          Skip to content
        </a>
        <header className="sticky top-0 z-30 flex items-center justify-between border-b border-border bg-card px-4 py-2 md:hidden">
          <Brand />
          <DialogPrimitive.Root open={menuOpen} onOpenChange={setMenuOpen}>
            <DialogPrimitive.Trigger asChild>
              <Button variant="ghost" size="icon" aria-label="Open menu">
                <Menu className="h-5 w-5" aria-hidden />
              </Button>
            </DialogPrimitive.Trigger>
            <DialogPrimitive.Portal>
              <DialogPrimitive.Overlay className="fixed inset-0 z-40 bg-black/40" />
              <DialogPrimitive.Content
                aria-describedby={undefined}
                className="fixed inset-y-0 left-0 z-50 flex w-72 max-w-[85vw] flex-col border-r border-border bg-card shadow-lg"
              >
                <div className="flex items-center justify-between px-5 py-3">
                  <DialogPrimitive.Title className="font-semibold">Menu</DialogPrimitive.Title>
                  <DialogPrimitive.Close asChild>
                    <Button variant="ghost" size="icon" aria-label="Close menu">
                      <X className="h-5 w-5" aria-hidden />
                    </Button>
                  </DialogPrimitive.Close>
                </div>
                <Sidebar nav={nav} name={name} role={role} did={did} onNavigate={() => setMenuOpen(false)} />
              </DialogPrimitive.Content>
            </DialogPrimitive.Portal>
          </DialogPrimitive.Root>
        </header>
        {/* The column spans the page; its content stays in view while the page scrolls. */}
        <aside className="hidden w-60 shrink-0 border-r border-border bg-card md:block">
          <div className="sticky top-0 flex h-screen flex-col">
            <div className="px-5 py-4">
              <Brand />
            </div>
            <Sidebar nav={nav} name={name} role={role} did={did} />
          </div>
        </aside>
        <main id="main" className="min-w-0 flex-1 px-4 py-5 md:px-8 md:py-6">
          {children}
        </main>
      </div>
    </RoleContext.Provider>
  );
}

export function PageHeader({
  title,
  description,
  actions,
}: {
  title: string;
  description?: string;
  actions?: ReactNode;
}) {
  return (
    <div className="mb-6 flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between sm:gap-4">
      <div className="min-w-0">
        <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
        {description ? <p className="mt-1 text-sm text-muted-foreground">{description}</p> : null}
      </div>
      {actions ? <div className="shrink-0">{actions}</div> : null}
    </div>
  );
}
