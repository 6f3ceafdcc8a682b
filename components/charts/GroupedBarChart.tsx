"use client";

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { TICK_STYLE, TOOLTIP_STYLE, type Series } from "./series";

/**
 * A category's name on lines of its own words (`code_generation` → `code` / `generation`): every
 * category keeps its label, and on a phone's width neighbours no longer run into each other.
 */
function WrappedTick({ x, y, payload }: { x?: number | string; y?: number | string; payload?: { value?: unknown } }) {
  const words = String(payload?.value ?? "")
    .split(/[\s_-]+/)
    .filter(Boolean);
  return (
    <text x={Number(x)} y={Number(y)} textAnchor="middle" fill={TICK_STYLE.fill} fontSize={TICK_STYLE.fontSize}>
      {words.map((w, i) => (
        <tspan key={i} x={Number(x)} dy={i === 0 ? "0.9em" : "1.1em"}>
          {w}
        </tspan>
      ))}
    </text>
  );
}

/**
 * Bars side by side over a category axis, one per series: each model's score per benchmark type.
 * The value axis is fixed (`domain`) so two charts, or the same chart over two windows, compare
 * at a glance; a missing value leaves a gap, not a zero.
 */
export function GroupedBarChart({
  data,
  x,
  series,
  domain = [0, 100],
  formatValue,
}: {
  data: Array<Record<string, string | number | null>>;
  x: string;
  series: Array<Series<string>>;
  domain?: [number, number];
  formatValue?: (value: number) => string;
}) {
  return (
    <ResponsiveContainer width="100%" height="100%">
      <BarChart data={data} margin={{ top: 4, right: 4, bottom: 0, left: -4 }} accessibilityLayer={false} barGap={2}>
        <CartesianGrid vertical={false} stroke="var(--border)" />
        <XAxis dataKey={x} tickLine={false} axisLine={false} tick={WrappedTick} interval={0} height={34} />
        <YAxis domain={domain} tickLine={false} axisLine={false} tick={TICK_STYLE} width={36} />
        <Tooltip
          cursor={{ fill: "var(--muted)" }}
          contentStyle={TOOLTIP_STYLE}
          formatter={(v) => (formatValue && typeof v === "number" ? formatValue(v) : String(v))}
        />
        {series.map((s) => (
          <Bar
            key={s.key}
            dataKey={s.key}
            name={s.label}
            fill={s.color}
            radius={[3, 3, 0, 0]}
            maxBarSize={28}
            isAnimationActive={false}
          />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}
