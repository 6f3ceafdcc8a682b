"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { BadgeCheck, ExternalLink, KeyRound, Plug, ShieldCheck } from "lucide-react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Controller, useForm } from "react-hook-form";
import ReactMarkdown from "react-markdown";
import rehypeSanitize from "rehype-sanitize";
import { toast } from "sonner";
import { z } from "zod";
import { BackLink } from "@/components/ui/back-link";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { Badge, Card, FieldError, Input, NativeSelect } from "@/components/ui/primitives";
import { Skeleton } from "@/components/ui/skeleton";
import { ConnectorClientRequest, DeploymentMode, InstallRequest } from "@/server/marketplace/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader, useCanAdminister } from "../ConsoleShell";
import { when } from "../executionFormat";
import { applyProblem, problemOf, useTRPC } from "../Providers";
import { compactCount, ConnectorIcon, HealthStatus, Stars } from "./marketplaceFormat";
import { Ratings } from "./Ratings";
import { fieldMessages, formable, schemaDefaults, SchemaForm, type ObjectSchema } from "./SchemaForm";

export type Connector = inferRouterOutputs<AppRouter>["marketplace"]["connector"];

const InstallForm = z.object({
  deployment_mode: DeploymentMode,
  config: InstallRequest.shape.config.unwrap(),
  // The configuration as JSON, for a configuration_schema the generated form cannot show.
  config_json: z.string(),
  granted_permissions: z.array(z.string()),
  base_url: z.string().trim(),
});

const OAuthClientFormSchema = z.object({
  client_id: z.string().trim().pipe(ConnectorClientRequest.shape.client_id),
  client_secret: z.string().pipe(ConnectorClientRequest.shape.client_secret.unwrap().or(z.literal(""))),
});

/**
 * One connector as its store page: what it does (its Markdown, sanitized), the scopes it asks
 * for and the actions it offers, live statistics and health, ratings with a review form, the
 * install flow (a configuration form generated from its `configuration_schema`; OAuth connectors
 * then send the browser to the provider's consent screen and back), and for administrators the
 * organization's OAuth client at the provider.
 */
export function ConnectorPage({ id }: { id: string }) {
  const trpc = useTRPC();
  const canAdminister = useCanAdminister();
  const [installing, setInstalling] = useState(false);
  const details = useQuery(trpc.marketplace.connector.queryOptions({ id }));
  const c = details.data;
  if (details.error)
    return (
      <>
        <BackLink href="/marketplace">Marketplace</BackLink>
        <p role="alert" className="text-sm text-destructive">
          {problemOf(details.error).detail}
        </p>
      </>
    );
  return (
    <>
      <BackLink href="/marketplace">Marketplace</BackLink>
      {!c ? (
        <div className="space-y-3">
          <Skeleton className="h-16 w-full" />
          <Skeleton className="h-64 w-full" />
        </div>
      ) : (
        <>
          <div className="mb-6 flex flex-col gap-4 sm:flex-row sm:items-start sm:justify-between">
            <div className="flex min-w-0 items-start gap-4">
              <ConnectorIcon name={c.name} src={c.icon_url} size={64} />
              <div className="min-w-0">
                <h1 className="flex flex-wrap items-center gap-2 text-2xl font-semibold tracking-tight">
                  {c.name}
                  {c.certified ? (
                    <Badge tone="primary">
                      <BadgeCheck className="mr-1 h-3.5 w-3.5" aria-hidden /> Certified
                    </Badge>
                  ) : null}
                </h1>
                <p className="mt-0.5 text-sm text-muted-foreground">
                  by {c.publisher.name}
                  {c.publisher.verified ? (
                    <ShieldCheck className="ml-1 inline h-3.5 w-3.5 text-primary" aria-label="verified publisher" />
                  ) : null}{" "}
                  · {c.provider} · v{c.version}
                </p>
                <p className="mt-2 max-w-2xl text-sm">{c.description}</p>
                <div className="mt-2 flex flex-wrap items-center gap-x-4 gap-y-1 text-sm">
                  <Stars value={c.statistics.rating_average} count={c.statistics.rating_count} />
                  <span className="text-muted-foreground">{compactCount(c.statistics.install_count)} installs</span>
                  <span className="text-muted-foreground">
                    {compactCount(c.statistics.invocation_count_30d)} invocations in 30 days
                  </span>
                  <span className="inline-flex items-center gap-1">
                    <HealthStatus status={c.health_status} />
                    <span className="text-xs text-muted-foreground">
                      {c.last_health_check_at ? `checked ${when(c.last_health_check_at)}` : "not checked yet"}
                    </span>
                  </span>
                </div>
              </div>
            </div>
            {canAdminister ? (
              <Button onClick={() => setInstalling(true)} className="shrink-0">
                <Plug className="h-4 w-4" aria-hidden /> Install
              </Button>
            ) : null}
          </div>
          <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
            <div className="min-w-0 space-y-6">
              <Card className="p-5">
                <div className="text-sm leading-relaxed [&_a]:text-primary [&_a]:underline [&_code]:rounded [&_code]:bg-muted [&_code]:px-1 [&_code]:text-xs [&_h1]:mb-2 [&_h1]:text-xl [&_h1]:font-semibold [&_h2]:mb-2 [&_h2]:mt-4 [&_h2]:text-lg [&_h2]:font-semibold [&_h2:first-child]:mt-0 [&_h3]:mt-3 [&_h3]:font-semibold [&_li]:my-0.5 [&_ol]:list-decimal [&_ol]:pl-5 [&_p]:my-2 [&_pre]:overflow-x-auto [&_pre]:rounded [&_pre]:bg-muted [&_pre]:p-2 [&_ul]:list-disc [&_ul]:pl-5">
                  <ReactMarkdown rehypePlugins={[rehypeSanitize]}>{c.long_description}</ReactMarkdown>
                </div>
              </Card>
              <section aria-labelledby="actions-h">
                <h2 id="actions-h" className="mb-2 text-lg font-semibold">
                  Actions
                </h2>
                <Card className="divide-y divide-border">
                  {c.actions.map((a) => (
                    <div key={a.id} className="flex flex-col gap-1 p-3 sm:flex-row sm:items-baseline sm:gap-3">
                      <code className="shrink-0 text-sm font-medium">{a.id}</code>
                      <span className="min-w-0 flex-1 text-sm text-muted-foreground">{a.description}</span>
                      <span className="flex flex-wrap gap-1">
                        {a.scopes.map((s) => (
                          <Badge key={s}>{s}</Badge>
                        ))}
                      </span>
                    </div>
                  ))}
                </Card>
              </section>
              <Ratings connector={c} />
            </div>
            <aside className="space-y-4">
              <Card className="space-y-3 p-4 text-sm">
                <h2 className="font-semibold">Details</h2>
                <dl className="grid grid-cols-[7rem_1fr] gap-x-2 gap-y-1.5">
                  <dt className="text-muted-foreground">Pricing</dt>
                  <dd>{c.pricing_model}</dd>
                  <dt className="text-muted-foreground">Deployment</dt>
                  <dd>{c.deployment_modes.join(", ")}</dd>
                  <dt className="text-muted-foreground">OAuth</dt>
                  <dd>{c.oauth.required ? "required (PKCE)" : "not needed"}</dd>
                  <dt className="text-muted-foreground">Capabilities</dt>
                  <dd className="flex flex-wrap gap-1">
                    {c.capabilities.map((cap) => (
                      <Link key={cap} href={`/marketplace?capability=${encodeURIComponent(cap)}`}>
                        <Badge className="hover:bg-primary/15">{cap}</Badge>
                      </Link>
                    ))}
                  </dd>
                </dl>
                {c.oauth.required ? (
                  <div>
                    <h3 className="mb-1 font-medium">Scopes requested</h3>
                    <ul className="flex flex-wrap gap-1">
                      {c.oauth.scopes.map((s) => (
                        <li key={s}>
                          <code className="rounded bg-muted px-1.5 py-0.5 text-xs">{s}</code>
                        </li>
                      ))}
                    </ul>
                    {c.oauth.authorization_url ? (
                      <p className="mt-2 text-xs text-muted-foreground">
                        Consent at{" "}
                        <span className="inline-flex items-center gap-0.5 break-all">
                          {new URL(c.oauth.authorization_url).host}
                          <ExternalLink className="h-3 w-3" aria-hidden />
                        </span>
                      </p>
                    ) : null}
                  </div>
                ) : null}
              </Card>
              {canAdminister && c.oauth.required ? <OAuthClientForm connectorId={c.connector_id} /> : null}
            </aside>
          </div>
          {canAdminister ? <InstallDialog connector={c} open={installing} onOpenChange={setInstalling} /> : null}
        </>
      )}
    </>
  );
}

/**
 * The install flow's first step. A connector without OAuth is active at once (to its
 * installation page); one with OAuth answers with the provider's authorization URL and the
 * browser goes there for consent, coming back through svc's callback to the installation page.
 */
function InstallDialog({
  connector: c,
  open,
  onOpenChange,
}: {
  connector: Connector;
  open: boolean;
  onOpenChange(open: boolean): void;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const schema = c.configuration_schema as ObjectSchema;
  const byForm = formable(schema);
  const form = useForm<z.infer<typeof InstallForm>>({
    resolver: zodResolver(InstallForm),
    defaultValues: {
      deployment_mode: c.deployment_modes[0]!,
      config: schemaDefaults(schema),
      config_json: "{}",
      granted_permissions: c.actions.map((a) => a.id),
      base_url: "",
    },
  });
  // Not a field: the provider's host while the browser is on its way there.
  const [redirecting, setRedirecting] = useState<string | null>(null);
  const install = useMutation(
    trpc.marketplace.install.mutationOptions({
      onSuccess: (out) => {
        void queryClient.invalidateQueries({ queryKey: trpc.marketplace.installations.pathKey() });
        if (out.status === "pending_oauth") {
          // The authorization is bound to this browser first (an HttpOnly cookie the callback
          // checks, RFC 9700 §4.7): a link carried to another browser cannot complete it.
          void bindToThisBrowser(out.oauth_state).then(
            () => {
              setRedirecting(new URL(out.oauth_authorization_url).host);
              window.location.assign(out.oauth_authorization_url);
            },
            (e: unknown) => form.setError("root", { message: (e as Error).message }),
          );
        } else {
          toast.success(`${c.name} installed`);
          router.push(`/marketplace/installations/${out.installation_id}`);
        }
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  const granted = form.watch("granted_permissions");
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={`Install ${c.name}`}
      description={
        c.oauth.required
          ? `You will be sent to ${c.provider} to allow access, then brought back here.`
          : "The installation is active as soon as it is created."
      }
    >
      <form
        onSubmit={form.handleSubmit((v) => {
          let config = v.config;
          if (!byForm) {
            try {
              config = JSON.parse(v.config_json) as Record<string, unknown>;
            } catch {
              form.setError("config_json", { message: "Not valid JSON." });
              return;
            }
          }
          install.mutate({
            id: c.connector_id,
            deployment_mode: v.deployment_mode,
            config,
            granted_permissions: v.granted_permissions,
            ...(v.base_url ? { base_url: v.base_url } : {}),
          });
        })}
        className="grid gap-4"
        noValidate
      >
        <FormField id="i-mode" label="Deployment mode">
          {(control) => (
            <NativeSelect {...control} {...form.register("deployment_mode")}>
              {c.deployment_modes.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </NativeSelect>
          )}
        </FormField>
        <fieldset className="grid gap-3 rounded-md border border-border p-3">
          <legend className="px-1 text-sm font-medium">Configuration</legend>
          {byForm ? (
            <Controller
              control={form.control}
              name="config"
              render={({ field }) => (
                <SchemaForm
                  schema={schema}
                  value={field.value}
                  onChange={field.onChange}
                  errors={fieldMessages(errors.config)}
                  idPrefix="cfg"
                />
              )}
            />
          ) : (
            <>
              <textarea
                aria-label="Configuration (JSON)"
                aria-invalid={!!errors.config_json}
                rows={5}
                className="w-full rounded-md border border-border bg-card px-3 py-2 font-mono text-xs"
                {...form.register("config_json")}
              />
              <FieldError message={errors.config_json?.message} />
            </>
          )}
        </fieldset>
        <fieldset className="grid gap-2 rounded-md border border-border p-3">
          <legend className="px-1 text-sm font-medium">Actions it may invoke</legend>
          {c.actions.map((a) => (
            <label key={a.id} className="flex items-start gap-2 text-sm">
              <input
                type="checkbox"
                className="mt-0.5 h-4 w-4 accent-primary"
                checked={granted.includes(a.id)}
                onChange={(e) =>
                  form.setValue(
                    "granted_permissions",
                    e.target.checked ? [...granted, a.id] : granted.filter((x) => x !== a.id),
                  )
                }
              />
              <span>
                <code className="font-medium">{a.id}</code>
                <span className="block text-xs text-muted-foreground">{a.description}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <FormField
          id="i-base"
          label="API base URL (optional)"
          description="For a self-hosted provider. Private addresses are refused unless the operator allows them."
          error={errors.base_url?.message}
        >
          {(control) => (
            <Input
              {...control}
              type="url"
              placeholder="Defaults to the provider's API"
              {...form.register("base_url")}
            />
          )}
        </FormField>
        {errors.root?.message ? (
          <p role="alert" className="text-sm text-destructive">
            {errors.root.message}
          </p>
        ) : null}
        {redirecting ? (
          <p role="status" className="text-sm text-muted-foreground">
            Opening {redirecting} for your consent…
          </p>
        ) : null}
        <div className="flex justify-end gap-2">
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button type="submit" disabled={install.isPending || !!redirecting || granted.length === 0}>
            {c.oauth.required ? `Continue to ${c.provider}` : "Install"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

/** An administrator sets the organization's OAuth client (id and secret) at the connector's provider. */
function OAuthClientForm({ connectorId }: { connectorId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const current = useQuery(trpc.marketplace.connectorClient.queryOptions({ connector_id: connectorId }));
  const form = useForm<z.input<typeof OAuthClientFormSchema>, unknown, z.output<typeof OAuthClientFormSchema>>({
    resolver: zodResolver(OAuthClientFormSchema),
    defaultValues: { client_id: "", client_secret: "" },
  });
  const save = useMutation(
    trpc.marketplace.setConnectorClient.mutationOptions({
      onSuccess: () => {
        toast.success("OAuth client saved");
        form.resetField("client_secret");
        void queryClient.invalidateQueries({ queryKey: trpc.marketplace.connectorClient.pathKey() });
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const errors = form.formState.errors;
  const v = current.data;
  return (
    <Card className="p-4 text-sm">
      <h2 className="mb-1 flex items-center gap-1.5 font-semibold">
        <KeyRound className="h-4 w-4" aria-hidden /> OAuth client
      </h2>
      <p className="mb-3 text-xs text-muted-foreground">
        {v
          ? v.source === "none"
            ? "None set: installs need one. Register svc at the provider with the callback URL /v1/marketplace/oauth/callback."
            : `In use: ${v.client_id} (from ${v.source})${v.has_client_secret ? ", with a secret" : ""}.`
          : "…"}
      </p>
      <form
        className="grid gap-2"
        onSubmit={form.handleSubmit(({ client_id, client_secret }) =>
          save.mutate({ connector_id: connectorId, client_id, ...(client_secret ? { client_secret } : {}) }),
        )}
      >
        <FormField id="oc-id" label="Client id" error={errors.client_id?.message}>
          {(control) => <Input {...control} autoComplete="off" {...form.register("client_id")} />}
        </FormField>
        <FormField id="oc-secret" label="Client secret" error={errors.client_secret?.message}>
          {(control) => (
            <Input
              {...control}
              type="password"
              autoComplete="new-password"
              placeholder={v?.has_client_secret ? "(kept; type to replace)" : ""}
              {...form.register("client_secret")}
            />
          )}
        </FormField>
        <Button type="submit" variant="outline" disabled={!form.watch("client_id").trim() || save.isPending}>
          Save client
        </Button>
      </form>
    </Card>
  );
}

/** Binds a console-started authorization to this browser (server/marketplace/browserBinding.ts). */
async function bindToThisBrowser(state: string): Promise<void> {
  const res = await fetch("/api/marketplace/oauth/bind", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ state }),
  });
  if (!res.ok) {
    const problem = (await res.json().catch(() => ({}))) as { detail?: string };
    throw new Error(problem.detail ?? `Binding the authorization to this browser failed (${res.status}).`);
  }
}
