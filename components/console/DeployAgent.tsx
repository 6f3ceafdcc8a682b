"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { FieldError, Input, Label, Mono } from "@/components/ui/primitives";
import { AgentManifest } from "@/server/agents/schemas";
import { problemOf, useTRPC } from "./Providers";

const MANIFEST_TEMPLATE = JSON.stringify(
  {
    name: "my-agent",
    version: "1.0.0",
    description: "What the agent does",
    capabilities: [],
    limits: { memory_mb: 32, timeout_ms: 5000 },
  },
  null,
  2,
);

/** The manifest is edited as JSON and checked with the service's own schema before it is sent. */
const DeployForm = z.object({
  manifest: z.string().superRefine((text, ctx) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      ctx.addIssue({ code: "custom", message: `Not JSON: ${e instanceof Error ? e.message : String(e)}` });
      return;
    }
    const parsed = AgentManifest.safeParse(value);
    if (!parsed.success)
      ctx.addIssue({
        code: "custom",
        message: parsed.error.issues.map((i) => `${i.path.join(".") || "manifest"}: ${i.message}`).join("\n"),
      });
  }),
  wait: z.boolean(),
});
type DeployValues = z.infer<typeof DeployForm>;

interface Bundle {
  name: string;
  size: number;
  base64: string;
  hash: string;
}

/** The bundle as the deploy call wants it: base64, and `sha256:<hex>` of its bytes, computed here. */
async function readBundle(file: File): Promise<Bundle> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  let binary = "";
  // Chunked: String.fromCharCode with a whole bundle's bytes as arguments overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { name: file.name, size: bytes.length, base64: btoa(binary), hash: `sha256:${hex}` };
}

export function DeployAgentDialog({
  open,
  onOpenChange,
  onDeployed,
}: {
  open: boolean;
  onOpenChange(o: boolean): void;
  onDeployed(agentId: string): void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [bundle, setBundle] = useState<Bundle | null>(null);
  const [bundleError, setBundleError] = useState<string | undefined>();
  const form = useForm<DeployValues>({
    resolver: zodResolver(DeployForm),
    defaultValues: { manifest: MANIFEST_TEMPLATE, wait: true },
  });
  const deploy = useMutation(
    trpc.agents.deploy.mutationOptions({
      onSuccess: (out) => {
        toast.success(
          out.data.status === "active"
            ? "Agent deployed and active"
            : out.data.status === "deploying"
              ? "Agent deploying: its bundle is being checked"
              : `Agent ${out.data.status}: see its status`,
        );
        void queryClient.invalidateQueries({ queryKey: trpc.agents.pathKey() });
        form.reset({ manifest: MANIFEST_TEMPLATE, wait: true });
        setBundle(null);
        onDeployed(out.data.agentId);
      },
      onError: (e) => {
        // The problem's errors[] name body fields: the bundle's go under the file, the manifest's under its editor.
        const { detail, fields } = problemOf(e);
        const manifest = Object.entries(fields).filter(([f]) => f.startsWith("manifest"));
        const file = Object.entries(fields).filter(([f]) => f.startsWith("bundle"));
        if (manifest.length)
          form.setError("manifest", {
            message: manifest.map(([f, m]) => `${f.replace(/^manifest\.?/, "") || "manifest"}: ${m}`).join("\n"),
          });
        if (file.length) setBundleError(file.map(([, m]) => m).join(" "));
        form.setError("root", { message: detail });
      },
    }),
  );
  const errors = form.formState.errors;
  const submit = form.handleSubmit((v) => {
    if (!bundle) {
      setBundleError("Choose the bundle: one .js or .mjs ES module");
      return;
    }
    deploy.mutate({
      manifest: JSON.parse(v.manifest) as z.infer<typeof AgentManifest>,
      bundleBase64: bundle.base64,
      bundleHash: bundle.hash,
      ...(v.wait ? { wait: true } : {}),
    });
  });
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Deploy an agent"
      description="Deploying a name that exists adds a version; the agent stays on its current version until the new one is checked."
    >
      <form noValidate className="space-y-4" onSubmit={(e) => void submit(e)}>
        <FormField
          id="agent-bundle"
          label="Bundle (.js or .mjs)"
          description={
            bundle ? (
              <>
                {bundle.size} bytes · <Mono data-testid="bundle-hash">{bundle.hash}</Mono>
              </>
            ) : (
              "Its SHA-256 is computed in this browser and checked by the service."
            )
          }
          error={bundleError}
        >
          {(control) => (
            <Input
              {...control}
              type="file"
              accept=".js,.mjs,text/javascript"
              className="h-auto py-1.5 file:mr-3 file:rounded file:border-0 file:bg-muted file:px-2 file:py-1 file:text-sm file:text-foreground"
              onChange={async (e) => {
                const file = e.target.files?.[0];
                setBundleError(undefined);
                setBundle(null);
                if (!file) return;
                try {
                  setBundle(await readBundle(file));
                } catch (err) {
                  setBundleError(`Could not read the file: ${err instanceof Error ? err.message : String(err)}`);
                }
              }}
            />
          )}
        </FormField>
        <div className="space-y-1.5">
          <Label htmlFor="agent-manifest">Manifest (JSON)</Label>
          <textarea
            id="agent-manifest"
            rows={11}
            spellCheck={false}
            aria-invalid={!!errors.manifest}
            className="w-full rounded-md border border-border bg-card p-3 font-mono text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring aria-[invalid=true]:border-destructive"
            {...form.register("manifest")}
          />
          {errors.manifest?.message ? (
            <p role="alert" className="whitespace-pre-line text-xs text-destructive [overflow-wrap:anywhere]">
              {errors.manifest.message}
            </p>
          ) : null}
        </div>
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" {...form.register("wait")} />
          Wait until the bundle is checked
        </label>
        <FieldError message={errors.root?.message} />
        <div className="flex justify-end gap-2">
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button type="submit" disabled={deploy.isPending}>
            {deploy.isPending ? "Deploying…" : "Deploy"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
