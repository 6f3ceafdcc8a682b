"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { UserPlus } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Confirm, Dialog } from "@/components/ui/dialog";
import { Badge, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { ago, Did, StatusBadge } from "./format";
import { problemOf, useTRPC } from "./Providers";

type Member = inferRouterOutputs<AppRouter>["members"]["list"][number];

/** People: invite by link with a role, revoke at once. */
export function Members() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [role, setRole] = useState<"admin" | "approver" | "viewer">("approver");
  const [link, setLink] = useState<string | null>(null);
  const list = useQuery(trpc.members.list.queryOptions());
  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey() });
  const invite = useMutation(
    trpc.members.invite.mutationOptions({
      onSuccess: (i) => setLink(i.link),
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const revoke = useMutation(
    trpc.members.revoke.mutationOptions({
      onSuccess: () => {
        toast.success("Access revoked: their sessions ended");
        void invalidate();
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const columns: ColumnDef<Member, unknown>[] = [
    { header: "Name", cell: ({ row }) => <span className="font-medium">{row.original.display_name}</span> },
    { header: "Role", cell: ({ row }) => <Badge tone="primary">{row.original.role}</Badge> },
    { header: "Passport", cell: ({ row }) => <Did value={row.original.did} /> },
    { header: "Status", cell: ({ row }) => <StatusBadge status={row.original.status} /> },
    {
      header: "Joined",
      cell: ({ row }) => <span className="text-xs text-muted-foreground">{ago(row.original.created_at)}</span>,
    },
    {
      header: "",
      id: "actions",
      cell: ({ row }) =>
        row.original.status === "active" ? (
          <Confirm
            trigger={
              <Button variant="outline" size="sm">
                Revoke
              </Button>
            }
            title={`Revoke ${row.original.display_name}?`}
            description="Their sessions end at once and their passkey no longer signs in."
            confirmLabel="Revoke access"
            onConfirm={() => revoke.mutate({ did: row.original.did })}
          />
        ) : null,
    },
  ];
  return (
    <>
      <PageHeader
        title="Members"
        description="People who sign in to the console with their passkeys, and their roles."
      />
      <div className="mb-4 flex flex-wrap items-end gap-3">
        <div className="space-y-1">
          <Label htmlFor="invite-role">Invite as</Label>
          <NativeSelect
            id="invite-role"
            className="w-40"
            value={role}
            onChange={(e) => setRole(e.target.value as typeof role)}
          >
            <option value="admin">Administrator</option>
            <option value="approver">Approver</option>
            <option value="viewer">Viewer</option>
          </NativeSelect>
        </div>
        <Button onClick={() => invite.mutate({ role, hours: 72 })} disabled={invite.isPending}>
          <UserPlus className="h-4 w-4" aria-hidden /> Create invitation link
        </Button>
      </div>
      <DataTable
        caption="Members"
        columns={columns}
        data={list.data ?? []}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty="No members yet."
      />
      <Dialog
        open={!!link}
        onOpenChange={(o) => !o && setLink(null)}
        title="Invitation link"
        description="Single use, valid 72 hours. Send it to the person you invite."
      >
        <div className="rounded-md bg-muted p-3">
          <Mono data-testid="invite-link">{link}</Mono>
        </div>
      </Dialog>
    </>
  );
}
