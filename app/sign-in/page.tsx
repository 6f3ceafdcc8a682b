import { SignIn } from "@/components/console/SignIn";

export const metadata = { title: "Sign in · svc" };

export default function SignInPage() {
  return <SignIn />;
}
