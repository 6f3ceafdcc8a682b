import type { ReactNode } from "react";
import { ConsoleShell } from "@/components/console/ConsoleShell";
import { consoleNavigation } from "@/app/consoleNavigation";
import { DocsShell } from "@/components/docs/DocsShell";
import { currentPerson } from "@/server/members/consoleSession";

/**
 * The documents are public (an API client's author needs no console account), but a signed-in
 * person reads them inside the console, sidebar and all.
 */
export default async function DocsLayout({ children }: { children: ReactNode }) {
  const person = await currentPerson();
  if (!person) return <DocsShell>{children}</DocsShell>;
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
