"use client";

import { ApiReferenceReact } from "@scalar/api-reference-react";
import "@scalar/api-reference-react/style.css";

/** The API reference, rendered by Scalar from the live OpenAPI document (no hand-written docs to drift). */
export function ApiReference() {
  return (
    <ApiReferenceReact
      configuration={{
        url: "/v1/openapi.json",
        withDefaultFonts: false,
        hideClientButton: true,
        telemetry: false,
        showDeveloperTools: "never",
        agent: { disabled: true },
        metaData: { title: "svc API reference" },
      }}
    />
  );
}
