import { describe, expect, it } from "vitest";
import { expandRepeatedFlags } from "./args";

describe("npx svc verify's flags", () => {
  it("take several values after one flag, or the flag repeated", () => {
    const repeated = ["--export", "e.ndjson", "--checkpoint", "a", "--checkpoint", "b", "--key", "k1", "--key", "k2"];
    expect(expandRepeatedFlags(["--export", "e.ndjson", "--checkpoint", "a", "b", "--key", "k1", "k2"])).toEqual(
      repeated,
    );
    expect(expandRepeatedFlags(repeated)).toEqual(repeated);
    expect(expandRepeatedFlags(["--checkpoint=a", "b", "--export", "e"])).toEqual([
      "--checkpoint=a",
      "--checkpoint",
      "b",
      "--export",
      "e",
    ]);
  });

  it("leave a stray word after a single-valued flag for the parser to refuse", () => {
    expect(expandRepeatedFlags(["--export", "a", "b"])).toEqual(["--export", "a", "b"]);
  });
});
