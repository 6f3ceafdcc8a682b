import { SignIn } from "@/components/console/SignIn";
import { oidcSettings } from "@/server/members/oidcSignIn";

export const metadata = { title: "Sign in · svc" };
// The company sign-in button follows SVC_OIDC_* at run time, not at build time.
export const dynamic = "force-dynamic";

/** next-auth's error codes after a company sign-in, in words. */
const COMPANY_ERRORS: Record<string, string> = {
  no_role:
    "Your company account was signed in, but none of its groups gives a console role here. Ask an administrator.",
  member_revoked: "Your access to this console has been revoked. Ask an administrator.",
  OAuthCallback: "The company sign-in could not be completed. Try again.",
  OAuthSignin: "The company sign-in could not start. Try again, or use a passkey.",
  Callback: "The company sign-in did not finish. Try again.",
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ error?: string }> }) {
  const { error } = await searchParams;
  const company = oidcSettings();
  return (
    <SignIn
      companyName={company?.name ?? null}
      companyError={error ? (COMPANY_ERRORS[error] ?? "The sign-in failed. Try again.") : null}
    />
  );
}
