// Pure zod: the console's marketplace pages import these. The response shapes are the spec's
// (MarketplaceConnectorListing, ConnectorDetails, InstallationPendingOAuth, InstallationActive,
// ConnectorInstallation, ConnectorRating, RatingSummary, InstallationUsage), field for field.
// They sit in one file per resource; this module gathers them so that /v1, the console (which may
// import only an area's schemas.ts, eslint.config.mjs rule 2) and the tests keep one import path. The order is the one they were declared in: the OpenAPI document lists
// components in the order their modules load.
export * from "./connectorSchemas";
export * from "./installationSchemas";
export * from "./ratingSchemas";
export * from "./invocationSchemas";
export * from "./oauthSchemas";
