/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native drivers and Prisma's adapters stay outside the bundle.
  serverExternalPackages: ["better-sqlite3", "pg", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "tsx"],
  poweredByHeader: false,
  // /v1 answers a trailing slash itself (a problem+json 404), never with a 308 to another path.
  skipTrailingSlashRedirect: true,
  reactStrictMode: true,
  // The app alone: tests and benchmarks are type-checked by `npm test`, and never block a start.
  typescript: { tsconfigPath: "tsconfig.next.json" },
};

export default nextConfig;
