/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native drivers and Prisma's adapters stay outside the bundle.
  serverExternalPackages: ["better-sqlite3", "pg", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "tsx"],
  poweredByHeader: false,
  reactStrictMode: true,
  typescript: { tsconfigPath: "tsconfig.json" },
};

export default nextConfig;
