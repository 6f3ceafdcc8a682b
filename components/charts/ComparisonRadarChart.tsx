"use client";

import { PolarAngleAxis, PolarGrid, PolarRadiusAxis, Radar, RadarChart, ResponsiveContainer, Tooltip } from "recharts";
import { TICK_STYLE, TOOLTIP_STYLE, type Series } from "./series";

/**
 * Two or more series over the same categories as overlaid polygons: models compared across
 * benchmark types, each model's shape showing where it is strong. Needs three categories or more
 * to be a shape; the page shows bars below that.
 */
export function ComparisonRadarChart({
  data,
  category,
  series,
  domain = [0, 100],
}: {
  data: Array<Record<string, string | number | null>>;
  category: string;
  series: Array<Series<string>>;
  domain?: [number, number];
}) {
  return (
    <ResponsiveContainer width="100%" height="100%">
      <RadarChart data={data} outerRadius="72%" accessibilityLayer={false}>
        <PolarGrid stroke="var(--border)" />
        <PolarAngleAxis dataKey={category} tick={TICK_STYLE} />
        <PolarRadiusAxis domain={domain} angle={90} tick={TICK_STYLE} axisLine={false} tickCount={3} />
        <Tooltip contentStyle={TOOLTIP_STYLE} />
        {series.map((s) => (
          <Radar
            key={s.key}
            dataKey={s.key}
            name={s.label}
            stroke={s.color}
            fill={s.color}
            fillOpacity={0.15}
            strokeWidth={2}
            isAnimationActive={false}
          />
        ))}
      </RadarChart>
    </ResponsiveContainer>
  );
}
