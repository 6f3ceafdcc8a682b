import type { ReactNode } from "react";
import { Providers } from "@/components/console/Providers";
import "./globals.css";

export const metadata = { title: "svc console", description: "The governed agent platform" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <body className="min-h-screen antialiased">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
