"use client";

import { useId } from "react";
import { Input, Label, NativeSelect } from "@/components/ui/primitives";

/** The part of JSON Schema the form understands; anything else is edited as JSON. */
interface PropertySchema {
  type?: string | string[];
  title?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  writeOnly?: boolean;
  items?: { type?: string };
}

export interface ObjectSchema {
  type?: string;
  properties?: Record<string, PropertySchema>;
  required?: string[];
}

const typeOf = (p: PropertySchema) => (Array.isArray(p.type) ? p.type.find((t) => t !== "null") : p.type);

/** The schema's defaults: the form's first values. */
export function schemaDefaults(schema: ObjectSchema | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(schema?.properties ?? {})) if (p.default !== undefined) out[name] = p.default;
  return out;
}

/** Whether every property can be a plain field (else the caller offers a JSON editor). */
export function formable(schema: ObjectSchema | undefined): boolean {
  return Object.values(schema?.properties ?? {}).every((p) => {
    const t = typeOf(p);
    return (
      t === "string" ||
      t === "integer" ||
      t === "number" ||
      t === "boolean" ||
      (t === "array" && (p.items?.type === "string" || p.items?.type === undefined))
    );
  });
}

/**
 * A form generated from a JSON Schema object (a connector's `configuration_schema`, an action's
 * `input_schema`): strings, numbers, booleans, enums (a select) and string lists (one per line),
 * with the schema's titles, descriptions and required marks. The server validates the result
 * against the same schema (ajv); its `errors[]` come back in `errors` keyed by property.
 */
export function SchemaForm({
  schema,
  value,
  onChange,
  errors = {},
  idPrefix,
}: {
  schema: ObjectSchema;
  value: Record<string, unknown>;
  onChange(next: Record<string, unknown>): void;
  errors?: Record<string, string>;
  idPrefix?: string;
}) {
  const generated = useId();
  const prefix = idPrefix ?? generated;
  const required = new Set(schema.required ?? []);
  const set = (name: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined || v === "") delete next[name];
    else next[name] = v;
    onChange(next);
  };
  const entries = Object.entries(schema.properties ?? {});
  if (entries.length === 0) return <p className="text-sm text-muted-foreground">Nothing to configure.</p>;
  return (
    <div className="grid gap-4">
      {entries.map(([name, p]) => {
        const id = `${prefix}-${name}`;
        const t = typeOf(p);
        const label = (
          <Label htmlFor={id}>
            {p.title ?? name}
            {required.has(name) ? (
              <span className="text-destructive" aria-hidden>
                {" "}
                *
              </span>
            ) : null}
          </Label>
        );
        const help = p.description ? (
          <p id={`${id}-help`} className="text-xs text-muted-foreground">
            {p.description}
          </p>
        ) : null;
        const error = errors[name] ? (
          <p id={`${id}-error`} role="alert" className="text-xs text-destructive">
            {errors[name]}
          </p>
        ) : null;
        const described = [p.description ? `${id}-help` : null, errors[name] ? `${id}-error` : null]
          .filter(Boolean)
          .join(" ");
        const common = {
          id,
          "aria-describedby": described || undefined,
          "aria-invalid": errors[name] ? true : undefined,
          "aria-required": required.has(name) || undefined,
        };
        const current = value[name];
        if (t === "boolean") {
          return (
            <div key={name} className="grid gap-1">
              <div className="flex items-center gap-2">
                <input
                  type="checkbox"
                  className="h-4 w-4 accent-primary"
                  checked={current === true}
                  onChange={(e) => set(name, e.target.checked)}
                  {...common}
                />
                {label}
              </div>
              {help}
              {error}
            </div>
          );
        }
        let control;
        if (p.enum) {
          control = (
            <NativeSelect
              value={current === undefined ? "" : String(current)}
              onChange={(e) =>
                set(
                  name,
                  p.enum!.find((x) => String(x) === e.target.value),
                )
              }
              {...common}
            >
              <option value="">{required.has(name) ? "Choose…" : "(none)"}</option>
              {p.enum.map((x) => (
                <option key={String(x)} value={String(x)}>
                  {String(x)}
                </option>
              ))}
            </NativeSelect>
          );
        } else if (t === "integer" || t === "number") {
          control = (
            <Input
              type="number"
              inputMode={t === "integer" ? "numeric" : "decimal"}
              step={t === "integer" ? 1 : "any"}
              min={p.minimum}
              max={p.maximum}
              value={current === undefined ? "" : String(current)}
              onChange={(e) => set(name, e.target.value === "" ? undefined : Number(e.target.value))}
              {...common}
            />
          );
        } else if (t === "array") {
          control = (
            <textarea
              rows={3}
              className="w-full rounded-md border border-border bg-card px-3 py-2 font-mono text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
              value={Array.isArray(current) ? current.join("\n") : ""}
              onChange={(e) => {
                const items = e.target.value.split("\n").map((s) => s.trim());
                set(name, items.some(Boolean) ? items.filter(Boolean) : undefined);
              }}
              placeholder="One per line"
              {...common}
            />
          );
        } else {
          control = (
            <Input
              type={p.writeOnly || p.format === "password" ? "password" : p.format === "uri" ? "url" : "text"}
              autoComplete="off"
              value={current === undefined ? "" : String(current)}
              onChange={(e) => set(name, e.target.value)}
              {...common}
            />
          );
        }
        return (
          <div key={name} className="grid gap-1.5">
            {label}
            {control}
            {help}
            {error}
          </div>
        );
      })}
    </div>
  );
}

/**
 * The messages react-hook-form holds under one field whose value this form edits (the server's
 * answer set on `<field>.<property>` by applyProblem), keyed by property for `errors`.
 */
export function fieldMessages(errors: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, e] of Object.entries((errors ?? {}) as Record<string, unknown>)) {
    const message = (e as { message?: unknown } | undefined)?.message;
    if (typeof message === "string") out[name] = message;
  }
  return out;
}
