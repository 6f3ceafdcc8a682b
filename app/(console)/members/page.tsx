import { Members } from "@/components/console/Members";
import { currentPerson } from "@/server/members/consoleSession";

export const metadata = { title: "Members · svc" };

/** Administrators only: other roles are told so (their tRPC calls would be refused anyway). */
export default async function Page() {
  const person = await currentPerson();
  if (person?.role !== "admin") {
    return (
      <div role="alert" className="rounded-lg border border-border bg-card p-6">
        <h1 className="text-xl font-semibold">Administrators only</h1>
        <p className="mt-2 text-sm text-muted-foreground">
          Managing members needs the admin role; you are {person?.role ?? "signed out"}.
        </p>
      </div>
    );
  }
  return <Members />;
}
