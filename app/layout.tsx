import type { ReactNode } from "react";

export const metadata = { title: "svc", description: "The governed agent platform" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
