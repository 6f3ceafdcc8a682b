import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { findInstallation, installationView, invocationFigures } from "./installationViews";

/** One installation of the caller's organization, with its invocation figures. */
export async function getInstallation(db: Db, principal: Principal, id: string) {
  const row = await findInstallation(db, principal.orgDid, id);
  const figures = await invocationFigures(db, [id]);
  return installationView(row, figures.get(id)!);
}
