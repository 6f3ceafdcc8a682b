import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { ConsoleShell } from "@/components/console/ConsoleShell";
import { consoleNavigation } from "@/app/consoleNavigation";
import { currentPerson } from "@/server/members/consoleSession";

/** Every console page needs a live session: signed out or revoked people go to sign-in. */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const person = await currentPerson();
  if (!person) redirect("/sign-in");
  return (
    <ConsoleShell
      nav={consoleNavigation(person.role ?? "viewer")}
      name={person.name}
      role={person.role ?? "viewer"}
      did={person.actorDid}
    >
      {children}
    </ConsoleShell>
  );
}
