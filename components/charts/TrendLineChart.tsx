"use client";

import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { TICK_STYLE, TOOLTIP_STYLE, type Series } from "./series";

/**
 * One line per series over a time axis (days): a model's benchmark score over time. Days a
 * series has no value are bridged (`connectNulls`), since benchmarks run irregularly; each real
 * value is a dot, so a bridged stretch is visibly an interpolation.
 */
export function TrendLineChart({
  data,
  x,
  series,
  domain = [0, 100],
  formatX,
}: {
  data: Array<Record<string, string | number | null>>;
  x: string;
  series: Array<Series<string>>;
  domain?: [number, number];
  formatX?: (value: string) => string;
}) {
  return (
    <ResponsiveContainer width="100%" height="100%">
      <LineChart data={data} margin={{ top: 6, right: 8, bottom: 0, left: -4 }} accessibilityLayer={false}>
        <CartesianGrid vertical={false} stroke="var(--border)" />
        <XAxis
          dataKey={x}
          tickLine={false}
          axisLine={false}
          tick={TICK_STYLE}
          tickFormatter={formatX}
          interval="preserveStartEnd"
          minTickGap={24}
        />
        <YAxis domain={domain} tickLine={false} axisLine={false} tick={TICK_STYLE} width={36} />
        <Tooltip
          contentStyle={TOOLTIP_STYLE}
          labelFormatter={(v) => (formatX ? formatX(String(v)) : String(v))}
          cursor={{ stroke: "var(--border)" }}
        />
        {series.map((s) => (
          <Line
            key={s.key}
            dataKey={s.key}
            name={s.label}
            stroke={s.color}
            strokeWidth={2}
            dot={{ r: 3, fill: s.color, strokeWidth: 0 }}
            activeDot={{ r: 4 }}
            connectNulls
            isAnimationActive={false}
          />
        ))}
      </LineChart>
    </ResponsiveContainer>
  );
}
