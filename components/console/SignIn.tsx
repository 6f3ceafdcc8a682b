"use client";

import { Building2, Fingerprint } from "lucide-react";
import { signIn } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/primitives";
import { signInWithPasskey } from "./passkeyClient";

/**
 * The sign-in page: a passkey, and, when SVC_OIDC_ISSUER is configured, the company's identity
 * provider ("Sign in with <name>"); `companyError` explains a company sign-in that came back refused.
 */
export function SignIn({
  companyName = null,
  companyError = null,
}: { companyName?: string | null; companyError?: string | null } = {}) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(companyError);
  const [busy, setBusy] = useState(false);
  return (
    <AuthFrame title="Sign in to svc" subtitle="Use the passkey on this device. No password, nothing to phish.">
      <Button
        className="w-full"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            await signInWithPasskey();
            router.push("/overview");
            router.refresh();
          } catch (e) {
            setError(e instanceof Error ? e.message : String(e));
          } finally {
            setBusy(false);
          }
        }}
      >
        <Fingerprint className="h-4 w-4" aria-hidden /> {busy ? "Waiting for your passkey…" : "Sign in with a passkey"}
      </Button>
      {companyName ? (
        <Button
          variant="outline"
          className="mt-3 w-full"
          disabled={busy}
          onClick={() => {
            setBusy(true);
            void signIn("oidc", { callbackUrl: "/overview" });
          }}
        >
          <Building2 className="h-4 w-4" aria-hidden /> Sign in with {companyName}
        </Button>
      ) : null}
      {error ? (
        <p role="alert" className="mt-3 text-sm text-destructive">
          {error}
        </p>
      ) : null}
      <p className="mt-6 text-xs text-muted-foreground">No account yet? Ask an administrator for an invitation link.</p>
    </AuthFrame>
  );
}

export function AuthFrame({
  title,
  subtitle,
  children,
}: {
  title: string;
  subtitle: string;
  children: React.ReactNode;
}) {
  return (
    <main className="grid min-h-screen place-items-center bg-muted px-4">
      <Card className="w-full max-w-sm p-8">
        <div className="mb-6 flex items-center gap-2">
          <div className="grid h-8 w-8 place-items-center rounded-md bg-primary font-bold text-primary-foreground">
            s
          </div>
          <span className="font-semibold">svc</span>
        </div>
        <h1 className="text-xl font-semibold">{title}</h1>
        <p className="mb-6 mt-1 text-sm text-muted-foreground">{subtitle}</p>
        {children}
      </Card>
    </main>
  );
}
