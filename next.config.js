/**
 * The console's pages and documents. Next's App Router bootstraps each page with inline scripts
 * (`self.__next_f.push(...)`) and next-themes sets the theme before paint with one more, so
 * script-src needs 'unsafe-inline' unless every page is rendered dynamically with a per-request
 * nonce (Next's "CSP without nonces" recipe); Radix, Sonner and the API reference set inline
 * styles. Everything else is this origin only, and no page may be framed (clickjacking).
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const securityHeaders = [
  { key: "Content-Security-Policy", value: contentSecurityPolicy },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  // For browsers that predate frame-ancestors.
  { key: "X-Frame-Options", value: "DENY" },
];

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native drivers and Prisma's adapters stay outside the bundle.
  serverExternalPackages: ["better-sqlite3", "pg", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "tsx"],
  poweredByHeader: false,
  // /v1 answers a trailing slash itself (a problem+json 404), never with a 308 to another path.
  skipTrailingSlashRedirect: true,
  reactStrictMode: true,
  // Every page's <title> is rendered with the page, not streamed after it: streamed metadata left a
  // console page without a <title> for a moment after a navigation (screen readers announce the
  // title; axe caught a page between the two). Our metadata is static: blocking on it costs nothing.
  htmlLimitedBots: /.*/,
  // No type check on the start path (it took minutes of a first `npm start` on 2 busy cores):
  // `npm test` and `npm run typecheck` check every file, the app's included.
  typescript: { tsconfigPath: "tsconfig.next.json", ignoreBuildErrors: true },
  async headers() {
    // Pages only: /v1 and /api answer JSON with the headers their contract sets.
    return [{ source: "/:path((?!v1/|v1$|api/|\\.well-known/).*)", headers: securityHeaders }];
  },
};

export default nextConfig;
