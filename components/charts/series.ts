/**
 * The charts' colours: the console's own tokens (app/globals.css), so a chart follows the theme
 * and keeps the contrast the tokens were chosen for, in light and dark.
 */
export const SERIES = {
  allowed: "var(--success)",
  refused: "var(--destructive)",
  neutral: "var(--muted-foreground)",
  primary: "var(--primary)",
  warning: "var(--warning)",
} as const;

export type SeriesColor = (typeof SERIES)[keyof typeof SERIES];

export interface Series<K extends string> {
  key: K;
  label: string;
  color: string;
}

/** Colours for categories with no meaning of their own (models): six, then they repeat. */
export const CATEGORICAL = [
  "var(--chart-1)",
  "var(--chart-2)",
  "var(--chart-3)",
  "var(--chart-4)",
  "var(--chart-5)",
  "var(--chart-6)",
] as const;

/** The colour of the `index`-th category. */
export const categoricalColor = (index: number): string => CATEGORICAL[index % CATEGORICAL.length]!;

/** The tooltip box of every chart: the theme's card, its border and text. */
export const TOOLTIP_STYLE = {
  background: "var(--card)",
  border: "1px solid var(--border)",
  borderRadius: 6,
  color: "var(--foreground)",
  fontSize: 12,
} as const;

/** The axes' tick labels: small, muted, in the theme's colour. */
export const TICK_STYLE = { fill: "var(--muted-foreground)", fontSize: 11 } as const;
