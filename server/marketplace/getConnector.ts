import type { z } from "zod";
import type { Db } from "../db/client";
import type { RawQueryable } from "../db/raw";
import { NotFound } from "../errors";
import { connectorById } from "./catalogue";
import { connectorFigures, invocationCount30d } from "./connectorStatistics";
import type { ConnectorDetails } from "./schemas";

/** One connector with its live statistics (installs, ratings, 30-day invocations) and health. */
export async function getConnector(
  db: Db,
  raw: RawQueryable,
  connectorId: string,
): Promise<z.input<typeof ConnectorDetails>> {
  const c = connectorById(connectorId);
  if (!c) throw NotFound("connector", connectorId);
  const d = c.definition;
  const [figures, invocations] = await Promise.all([
    connectorFigures(raw, [connectorId]),
    invocationCount30d(db, connectorId),
  ]);
  const f = figures.get(connectorId)!;
  return {
    connector_id: d.connector_id,
    name: d.name,
    provider: d.provider,
    description: d.description,
    long_description: d.long_description,
    icon_url: c.iconUrl,
    version: d.version,
    publisher: d.publisher,
    certified: d.certified,
    pricing_model: d.pricing_model,
    capabilities: d.capabilities,
    deployment_modes: d.deployment_modes,
    configuration_schema: d.configuration_schema,
    oauth: {
      required: d.oauth.required,
      scopes: d.oauth.scopes,
      authorization_url: d.oauth.authorization_url ?? null,
      token_url: d.oauth.token_url ?? null,
    },
    statistics: {
      install_count: f.installCount,
      rating_average: f.ratingAverage,
      rating_count: f.ratingCount,
      invocation_count_30d: invocations,
    },
    health_status: f.healthStatus,
    last_health_check_at: f.lastHealthCheckAt?.toISOString() ?? null,
    actions: d.actions.map((a) => ({
      id: a.id,
      description: a.description,
      method: a.method,
      path: a.path,
      input_schema: a.input_schema,
      scopes: a.scopes ?? [],
    })),
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
