"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { useForm } from "react-hook-form";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { FormField } from "@/components/ui/form-field";
import { Input } from "@/components/ui/primitives";
import { registerPasskey } from "./passkeyClient";
import { AuthFrame } from "./SignIn";

const Form = z.object({ displayName: z.string().trim().min(1, "Enter your name").max(100) });

/** Redeems a set-up or invite link: checks it, then registers this device's passkey. */
export function Register({ token, kind }: { token: string; kind: "setup" | "invite" }) {
  const router = useRouter();
  const [link, setLink] = useState<{ role?: string; error?: string; superseded?: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const form = useForm<z.infer<typeof Form>>({ resolver: zodResolver(Form), defaultValues: { displayName: "" } });
  useEffect(() => {
    void fetch(`/api/passkeys/invite?token=${encodeURIComponent(token)}`)
      .then(async (r) => (await r.json()) as { role?: string; detail?: string; type?: string })
      .then((j) =>
        setLink(
          j.role
            ? { role: j.role }
            : { error: j.detail ?? "This link is not valid.", superseded: j.type?.includes("invite_superseded") },
        ),
      );
  }, [token]);
  const title = kind === "setup" ? "Set up svc" : "Join your organization";
  if (!link)
    return (
      <AuthFrame title={title} subtitle="Checking your link…">
        {null}
      </AuthFrame>
    );
  if (link.error)
    return (
      <AuthFrame title={title} subtitle={link.superseded ? "This link was superseded." : "This link cannot be used."}>
        <p role="alert" className={link.superseded ? "text-sm" : "text-sm text-destructive"}>
          {link.error}
        </p>
        {link.superseded ? (
          <Link
            href="/sign-in"
            className="mt-4 inline-flex h-9 w-full items-center justify-center rounded-md bg-primary px-4 text-sm font-medium text-primary-foreground hover:bg-primary/90"
          >
            Sign in
          </Link>
        ) : null}
      </AuthFrame>
    );
  return (
    <AuthFrame
      title={title}
      subtitle={
        kind === "setup"
          ? "Register the first administrator's passkey. It stays on this device: svc only ever sees its public key."
          : `You are invited as ${link.role}. Register a passkey on this device to join.`
      }
    >
      <form
        noValidate
        className="space-y-4"
        onSubmit={form.handleSubmit(async ({ displayName }) => {
          setError(null);
          try {
            await registerPasskey(token, displayName);
            router.push("/overview");
            router.refresh();
          } catch (e) {
            setError(e instanceof Error ? e.message : String(e));
          }
        })}
      >
        <FormField id="displayName" label="Your name" error={form.formState.errors.displayName?.message}>
          {(control) => <Input {...control} autoComplete="name" {...form.register("displayName")} />}
        </FormField>
        <Button type="submit" className="w-full" disabled={form.formState.isSubmitting}>
          {form.formState.isSubmitting ? "Waiting for your passkey…" : "Create passkey"}
        </Button>
        {error ? (
          <p role="alert" className="text-sm text-destructive">
            {error}
          </p>
        ) : null}
      </form>
    </AuthFrame>
  );
}
