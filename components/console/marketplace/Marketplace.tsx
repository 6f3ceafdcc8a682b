"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { BadgeCheck, Download, Search } from "lucide-react";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useEffect, useState } from "react";
import { Button } from "@/components/ui/button";
import { Badge, Card, Input, Label, NativeSelect } from "@/components/ui/primitives";
import { Skeleton } from "@/components/ui/skeleton";
import { DeploymentMode, PricingModel } from "@/server/marketplace/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "../ConsoleShell";
import { problemOf, useTRPC } from "../Providers";
import { useSearchParamsWriter } from "../useSearchParamsWriter";
import { MarketplaceTabs } from "./MarketplaceTabs";
import { compactCount, ConnectorIcon, HealthStatus, Stars } from "./marketplaceFormat";

type Listing = inferRouterOutputs<AppRouter>["marketplace"]["connectors"]["data"][number];

const FILTERS = ["q", "pricing_model", "certified", "deployment_mode", "capability"] as const;

/**
 * The connector marketplace as a store: a card per connector (icon, name, publisher, certified
 * badge, stars, installs, health), searched and filtered on the server (`q`, pricing, certified,
 * deployment mode, capability). The filters live in the URL, so a view can be shared.
 */
export function Marketplace() {
  const trpc = useTRPC();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const [q, setQ] = useState(params.get("q") ?? "");
  const filter = (key: (typeof FILTERS)[number]) => params.get(key) ?? "";
  const setFilter = (key: (typeof FILTERS)[number], value: string) =>
    writeParams((next) => (value ? next.set(key, value) : next.delete(key)));
  // Search as the user types, once they pause. Set unconditionally: the writer compares with the
  // last query asked for (a search still on its way counts) and asks for nothing when q is in it.
  useEffect(() => {
    const t = setTimeout(() => setFilter("q", q.trim()), 250);
    return () => clearTimeout(t);
  }, [q]);
  const pricing = PricingModel.safeParse(filter("pricing_model")).data;
  const mode = DeploymentMode.safeParse(filter("deployment_mode")).data;
  const certified = filter("certified") === "true" || filter("certified") === "false" ? filter("certified") : undefined;
  const input = {
    limit: 24,
    ...(filter("q") ? { q: filter("q") } : {}),
    ...(pricing ? { pricing_model: pricing } : {}),
    ...(mode ? { deployment_mode: mode } : {}),
    ...(certified ? { certified: certified as "true" | "false" } : {}),
    ...(filter("capability") ? { capability: filter("capability") } : {}),
  };
  const list = useInfiniteQuery(
    trpc.marketplace.connectors.infiniteQueryOptions(input, {
      getNextPageParam: (last) => last.pagination.next_cursor ?? undefined,
    }),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const filtered = FILTERS.some((k) => filter(k));
  return (
    <>
      <PageHeader
        title="Marketplace"
        description="Connectors to the tools your agents work with. Every invocation is governed, recorded in the ledger and counted in its installation's usage."
      />
      <MarketplaceTabs current="catalogue" />
      <div className="mb-5 grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-[minmax(14rem,1fr)_10rem_10rem_11rem]">
        <div className="space-y-1 sm:col-span-2 lg:col-span-1">
          <Label htmlFor="m-search">Search</Label>
          <div className="relative">
            <Search
              aria-hidden
              className="pointer-events-none absolute left-2.5 top-2.5 h-4 w-4 text-muted-foreground"
            />
            <Input
              id="m-search"
              type="search"
              className="pl-8"
              placeholder="GitHub, issues, files…"
              value={q}
              onChange={(e) => setQ(e.target.value)}
            />
          </div>
        </div>
        <div className="space-y-1">
          <Label htmlFor="m-pricing">Pricing</Label>
          <NativeSelect
            id="m-pricing"
            value={pricing ?? ""}
            onChange={(e) => setFilter("pricing_model", e.target.value)}
          >
            <option value="">Any</option>
            {PricingModel.options.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </NativeSelect>
        </div>
        <div className="space-y-1">
          <Label htmlFor="m-certified">Certified</Label>
          <NativeSelect
            id="m-certified"
            value={certified ?? ""}
            onChange={(e) => setFilter("certified", e.target.value)}
          >
            <option value="">Any</option>
            <option value="true">Certified only</option>
            <option value="false">Not certified</option>
          </NativeSelect>
        </div>
        <div className="space-y-1">
          <Label htmlFor="m-mode">Deployment</Label>
          <NativeSelect id="m-mode" value={mode ?? ""} onChange={(e) => setFilter("deployment_mode", e.target.value)}>
            <option value="">Any</option>
            {DeploymentMode.options.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </NativeSelect>
        </div>
      </div>
      {filter("capability") ? (
        <p className="mb-4 text-sm">
          Offering <code className="rounded bg-muted px-1">{filter("capability")}</code>{" "}
          <button
            className="text-primary underline-offset-2 hover:underline"
            onClick={() => setFilter("capability", "")}
          >
            clear
          </button>
        </p>
      ) : null}
      {list.error ? (
        <p role="alert" className="text-sm text-destructive">
          {problemOf(list.error).detail}
        </p>
      ) : null}
      <ul
        className="grid grid-cols-1 gap-4 sm:grid-cols-2 xl:grid-cols-3"
        aria-label="Connectors"
        aria-busy={list.isFetching}
      >
        {list.isPending
          ? Array.from({ length: 6 }, (_, i) => (
              <li key={i}>
                <Skeleton className="h-44 w-full" />
              </li>
            ))
          : rows.map((c) => <ConnectorCard key={c.connector_id} connector={c} />)}
      </ul>
      {!list.isPending && rows.length === 0 ? (
        <p className="mt-6 text-center text-sm text-muted-foreground">
          {filtered ? "No connector matches these filters." : "The catalogue is empty."}
        </p>
      ) : null}
      {list.hasNextPage ? (
        <div className="mt-6 flex justify-center">
          <Button variant="outline" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
            Show more
          </Button>
        </div>
      ) : null}
    </>
  );
}

function ConnectorCard({ connector: c }: { connector: Listing }) {
  return (
    <li>
      <Card className="group relative flex h-full flex-col gap-3 p-4 transition-colors hover:border-primary/50">
        <div className="flex items-start gap-3">
          <ConnectorIcon name={c.name} src={c.icon_url} size={44} />
          <div className="min-w-0 flex-1">
            {/* The whole name, wrapped: beside the icon and the health badge a card has too little room to cut it. */}
            <h2 className="flex items-start gap-1.5 font-semibold leading-tight">
              <Link
                href={`/marketplace/${encodeURIComponent(c.connector_id)}`}
                className="min-w-0 [overflow-wrap:anywhere] after:absolute after:inset-0 after:content-[''] focus-visible:outline-none"
              >
                {c.name}
              </Link>
              {c.certified ? (
                <BadgeCheck className="h-4 w-4 shrink-0 text-primary" aria-label="Certified" role="img" />
              ) : null}
            </h2>
            <p className="truncate text-xs text-muted-foreground">
              by {c.publisher_id === "svc" ? "svc (core)" : c.publisher_id} · v{c.version}
            </p>
          </div>
          <HealthStatus status={c.health_status} />
        </div>
        <p className="line-clamp-2 flex-1 text-sm text-muted-foreground">{c.description}</p>
        <div className="flex flex-wrap items-center justify-between gap-2 text-xs">
          <Stars value={c.rating_average} count={c.rating_count} />
          <span className="inline-flex items-center gap-1 text-muted-foreground">
            <Download className="h-3.5 w-3.5" aria-hidden />
            {compactCount(c.install_count)} install{c.install_count === 1 ? "" : "s"}
          </span>
        </div>
        <div className="flex flex-wrap gap-1.5">
          <Badge tone={c.pricing_model === "free" ? "success" : "neutral"}>{c.pricing_model}</Badge>
          {c.oauth.required ? <Badge>OAuth</Badge> : <Badge>no OAuth</Badge>}
          {c.deployment_modes.map((m) => (
            <Badge key={m} tone="neutral">
              {m}
            </Badge>
          ))}
        </div>
      </Card>
    </li>
  );
}
