"use client";

import { useState } from "react";
import { PolarAngleAxis, PolarGrid, PolarRadiusAxis, Radar, RadarChart, ResponsiveContainer, Tooltip } from "recharts";
import { TICK_STYLE, TOOLTIP_STYLE, type Series } from "./series";

// An estimate of a category label's width (11 px system font): enough to keep it inside the chart.
const labelWidth = (label: string) => label.length * TICK_STYLE.fontSize * 0.62;

/**
 * A category's label at its vertex, kept inside the chart: at a phone's width a long label on the
 * left or right side ran past the edge ("summarization" drew as "mmarization"). One that would is
 * drawn from the edge inward, just above its vertex's spoke.
 */
function CategoryTick({
  x,
  y,
  textAnchor,
  payload,
  chartWidth,
}: {
  x: number | string;
  y: number | string;
  textAnchor: string;
  payload: { value?: unknown };
  chartWidth: number;
}) {
  const label = String(payload.value ?? "");
  const w = labelWidth(label);
  let anchor = (textAnchor === "start" || textAnchor === "end" ? textAnchor : "middle") as "start" | "middle" | "end";
  let at = Number(x);
  let dy = "0.35em";
  if (chartWidth > 0 && anchor === "end" && at - w < 2) [anchor, at, dy] = ["start", 2, "-0.6em"];
  else if (chartWidth > 0 && anchor === "start" && at + w > chartWidth - 2)
    [anchor, at, dy] = ["end", chartWidth - 2, "-0.6em"];
  return (
    <text x={at} y={y} dy={dy} textAnchor={anchor} fill={TICK_STYLE.fill} fontSize={TICK_STYLE.fontSize}>
      {label}
    </text>
  );
}

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
  const [width, setWidth] = useState(0);
  return (
    <ResponsiveContainer width="100%" height="100%" onResize={(w) => setWidth(w)}>
      <RadarChart data={data} outerRadius="72%" accessibilityLayer={false}>
        <PolarGrid stroke="var(--border)" />
        {/* The scale between the first two spokes, not along the first, whose label it covered. */}
        <PolarAngleAxis
          dataKey={category}
          tick={(props) => (
            <CategoryTick
              x={props.x}
              y={props.y}
              textAnchor={props.textAnchor}
              payload={props.payload}
              chartWidth={width}
            />
          )}
        />
        <PolarRadiusAxis domain={domain} angle={45} tick={TICK_STYLE} axisLine={false} tickCount={3} />
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
