"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useTRPC } from "./Providers";

/**
 * Names to show beside DIDs: the organization's passports (its first hundred, which covers the
 * people and agents a console shows) and the organization itself. A DID without a name stays a DID.
 */
export function usePassportNames(): (did: string | null | undefined) => string | undefined {
  const trpc = useTRPC();
  const passports = useQuery(trpc.identity.passports.list.queryOptions({ limit: 100 }, { staleTime: 60_000 }));
  const me = useQuery(trpc.members.me.queryOptions(undefined, { staleTime: 60_000 }));
  const names = useMemo(() => {
    const map = new Map<string, string>();
    for (const p of passports.data?.data ?? []) map.set(p.did, p.name);
    if (me.data) map.set(me.data.org_did, me.data.org_name);
    return map;
  }, [passports.data, me.data]);
  return (did) => (did ? names.get(did) : undefined);
}
