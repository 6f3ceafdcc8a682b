"use client";

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { TICK_STYLE, TOOLTIP_STYLE, type Series } from "./series";

/** The height a HorizontalBarChart needs for `rows` bars: its figure sizes itself from it. */
export const horizontalBarHeight = (rows: number) => 24 + rows * 28;

/**
 * Bars along a value axis, one row per category, its series stacked: calls let through and
 * refused per capability on a key's page. Categories with long names (capabilities) keep them
 * readable on a phone's width, where a column chart would have to drop or tilt them.
 */
export function HorizontalBarChart<K extends string>({
  data,
  y,
  series,
  formatY,
  labelWidth = 150,
}: {
  data: Array<Record<K | string, string | number>>;
  y: string;
  series: Array<Series<K>>;
  formatY?: (value: string) => string;
  labelWidth?: number;
}) {
  return (
    <ResponsiveContainer width="100%" height="100%">
      <BarChart
        data={data}
        layout="vertical"
        margin={{ top: 0, right: 8, bottom: 0, left: 0 }}
        accessibilityLayer={false}
        barCategoryGap={6}
      >
        <CartesianGrid horizontal={false} stroke="var(--border)" />
        <XAxis type="number" allowDecimals={false} tickLine={false} axisLine={false} tick={TICK_STYLE} height={20} />
        <YAxis
          type="category"
          dataKey={y}
          tickLine={false}
          axisLine={false}
          tick={TICK_STYLE}
          tickFormatter={formatY}
          interval={0}
          width={labelWidth}
        />
        <Tooltip
          cursor={{ fill: "var(--muted)" }}
          contentStyle={TOOLTIP_STYLE}
          labelFormatter={(v) => (formatY ? formatY(String(v)) : String(v))}
        />
        {series.map((s, i) => (
          <Bar
            key={s.key}
            dataKey={s.key}
            name={s.label}
            stackId="a"
            fill={s.color}
            radius={i === series.length - 1 ? [0, 3, 3, 0] : 0}
            maxBarSize={18}
            isAnimationActive={false}
          />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}
