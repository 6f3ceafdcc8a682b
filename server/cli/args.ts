/** Flags of `npx svc verify` that take several values. */
const REPEATABLE = new Set(["--checkpoint", "--consistency", "--key"]);

/**
 * `--checkpoint a b c` means `--checkpoint a --checkpoint b --checkpoint c`: the words after a
 * repeatable flag, up to the next flag, are each one more value of it.
 */
export function expandRepeatedFlags(args: string[]): string[] {
  const out: string[] = [];
  let repeating: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith("--")) {
      const [name, inline] = arg.split(/=(.*)/s);
      repeating = REPEATABLE.has(name!) ? name : undefined;
      out.push(arg);
      if (inline === undefined && i + 1 < args.length && !args[i + 1]!.startsWith("--")) out.push(args[++i]!);
      else if (inline === undefined) repeating = undefined;
    } else if (repeating) out.push(repeating, arg);
    else out.push(arg);
  }
  return out;
}
