"use client";

import { ApiReferenceReact } from "@scalar/api-reference-react";
import "@scalar/api-reference-react/style.css";
import { useTheme } from "next-themes";
import { useMounted } from "@/components/console/Providers";

/** The API reference, rendered by Scalar from the live OpenAPI document (no hand-written docs to drift). */
export function ApiReference() {
  const { resolvedTheme } = useTheme();
  // Scalar follows the console's theme, which only the browser knows: render it after hydration.
  if (!useMounted()) return <p className="text-sm text-muted-foreground">Loading the API reference…</p>;
  return (
    <div className="svc-api-reference -mx-4 -my-5 md:-mx-8 md:-my-6">
      <ApiReferenceReact
        configuration={{
          url: "/v1/openapi.json",
          withDefaultFonts: false,
          hideClientButton: true,
          hideDarkModeToggle: true,
          forceDarkModeState: resolvedTheme === "dark" ? "dark" : "light",
          telemetry: false,
          showDeveloperTools: "never",
          agent: { disabled: true },
          metaData: { title: "svc API reference" },
        }}
      />
    </div>
  );
}
