import type { ReactNode } from "react";
import { cn } from "./cn";
import { FieldError, Label } from "./primitives";

/** What a field's control needs so that its label, description and error are announced with it. */
export interface FieldControlProps {
  id: string;
  "aria-invalid": boolean;
  "aria-describedby": string | undefined;
}

/**
 * One form field: its label, its control, an optional description and its error message. The
 * caller renders the control (an Input, a NativeSelect, a textarea, usually spread with
 * react-hook-form's `register`) with the props handed to it, so every form wires `htmlFor`,
 * `aria-invalid` and `aria-describedby` the same way and none can forget one.
 */
export function FormField({
  id,
  label,
  description,
  error,
  after,
  className,
  labelClassName,
  children,
}: {
  id: string;
  label: ReactNode;
  description?: ReactNode;
  error?: string;
  /** Shown under the description, above the error (a preview of what was typed). */
  after?: ReactNode;
  className?: string;
  labelClassName?: string;
  children(control: FieldControlProps): ReactNode;
}) {
  const descriptionId = description ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [descriptionId, errorId].filter(Boolean).join(" ") || undefined;
  return (
    <div className={cn("space-y-1.5", className)}>
      <Label htmlFor={id} className={labelClassName}>
        {label}
      </Label>
      {children({ id, "aria-invalid": !!error, "aria-describedby": describedBy })}
      {description ? (
        <p id={descriptionId} className="text-xs text-muted-foreground">
          {description}
        </p>
      ) : null}
      {after}
      <FieldError id={errorId} message={error} />
    </div>
  );
}
