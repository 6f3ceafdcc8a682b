import type { z } from "zod";
import type { RawQueryable } from "../db/raw";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { catalogue, type CatalogueConnector } from "./catalogue";
import { connectorFigures, type ConnectorFigures } from "./connectorStatistics";
import type { ConnectorListQuery, MarketplaceConnectorListing } from "./schemas";

const LIST = "marketplace.connectors";

/** A connector as the listing shows it. */
export function listingView(c: CatalogueConnector, f: ConnectorFigures): z.input<typeof MarketplaceConnectorListing> {
  const d = c.definition;
  return {
    connector_id: d.connector_id,
    name: d.name,
    provider: d.provider,
    description: d.description,
    icon_url: c.iconUrl,
    version: d.version,
    publisher_id: d.publisher.publisher_id,
    certified: d.certified,
    pricing_model: d.pricing_model,
    capabilities: d.capabilities,
    install_count: f.installCount,
    rating_average: f.ratingAverage,
    rating_count: f.ratingCount,
    oauth: { required: d.oauth.required, scopes: d.oauth.scopes },
    deployment_modes: d.deployment_modes,
    health_status: f.healthStatus,
    created_at: c.createdAt.toISOString(),
  };
}

/**
 * The catalogue, filtered and paged. The catalogue is in memory (the files, read once), so the
 * filters run there; only the page's connectors have their figures read from the database.
 * Order: name, then id. `q` matches when every word appears in the connector's name, provider,
 * description, id or capabilities.
 */
export async function listConnectors(raw: RawQueryable, query: z.output<typeof ConnectorListQuery>, secret: Buffer) {
  const words = (query.q ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const matches = catalogue().connectors.filter((c) => {
    const d = c.definition;
    if (query.capability && !d.capabilities.includes(query.capability)) return false;
    if (query.pricing_model && d.pricing_model !== query.pricing_model) return false;
    if (query.certified !== undefined && d.certified !== query.certified) return false;
    if (query.deployment_mode && !d.deployment_modes.includes(query.deployment_mode)) return false;
    if (query.publisher_id && d.publisher.publisher_id !== query.publisher_id) return false;
    return words.every((w) => c.searchText.includes(w));
  });
  let start = 0;
  if (query.cursor) {
    const [name, id] = decodeCursor(secret, LIST, query.cursor);
    const after = (c: CatalogueConnector) =>
      c.definition.name.localeCompare(String(name), "en") > 0 ||
      (c.definition.name === name && c.definition.connector_id.localeCompare(String(id)) > 0);
    start = matches.findIndex(after);
    if (start < 0) start = matches.length;
  }
  const page = matches.slice(start, start + query.limit);
  const hasMore = start + query.limit < matches.length;
  const figures = await connectorFigures(
    raw,
    page.map((c) => c.definition.connector_id),
  );
  const last = page[page.length - 1];
  return {
    data: page.map((c) => listingView(c, figures.get(c.definition.connector_id)!)),
    pagination: {
      has_more: hasMore,
      next_cursor:
        hasMore && last ? encodeCursor(secret, LIST, [last.definition.name, last.definition.connector_id]) : null,
      total_count: matches.length,
    },
  };
}
