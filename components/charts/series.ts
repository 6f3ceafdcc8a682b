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
