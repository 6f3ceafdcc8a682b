"use client";

import type { ReactNode } from "react";
import { Cell, Pie, PieChart, ResponsiveContainer } from "recharts";

/**
 * Parts of a whole as a ring, with a figure in its middle: executions by status (success rate in
 * the middle), webhooks by health; affinity and usage shares reuse it.
 */
export function DonutChart({
  parts,
  center,
}: {
  parts: Array<{ label: string; value: number; color: string }>;
  center?: ReactNode;
}) {
  const total = parts.reduce((n, p) => n + p.value, 0);
  const shown = total === 0 ? [{ label: "none", value: 1, color: "var(--muted)" }] : parts.filter((p) => p.value > 0);
  return (
    <div className="relative h-full w-full">
      <ResponsiveContainer width="100%" height="100%">
        <PieChart accessibilityLayer={false}>
          <Pie
            data={shown}
            dataKey="value"
            nameKey="label"
            rootTabIndex={-1}
            innerRadius="68%"
            outerRadius="95%"
            paddingAngle={shown.length > 1 ? 2 : 0}
            stroke="none"
            isAnimationActive={false}
          >
            {shown.map((p) => (
              <Cell key={p.label} fill={p.color} />
            ))}
          </Pie>
        </PieChart>
      </ResponsiveContainer>
      {center ? (
        <div className="pointer-events-none absolute inset-0 flex flex-col items-center justify-center text-center">
          {center}
        </div>
      ) : null}
    </div>
  );
}
