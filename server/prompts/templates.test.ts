import { describe, expect, it } from "vitest";
import { MAX_TEMPLATE_DEPTH } from "./schemas";
import { parseTemplate, RenderTooLarge, renderTokens, sectionDepth, templateProblem } from "./templates";

const render = (template: string, inputs: Record<string, unknown>, child?: string) =>
  renderTokens(parseTemplate(template), template, inputs, child);

describe("prompt templates within bounds", () => {
  it("refuses sections nested deeper than MAX_TEMPLATE_DEPTH at publication (5,000 overflowed the stack)", () => {
    const nested = (n: number) => `${"{{#a}}".repeat(n)}x${"{{/a}}".repeat(n)}`;
    const tokens = parseTemplate(nested(5000));
    expect(sectionDepth(tokens)).toBe(5000);
    expect(templateProblem(tokens)).toMatch(/nests sections 5000 deep/);
    expect(templateProblem(parseTemplate(nested(MAX_TEMPLATE_DEPTH)))).toBeUndefined();
    expect(render(nested(MAX_TEMPLATE_DEPTH), { a: true })).toBe("x");
  });

  it("stops a render at the size bound while producing it, not after", () => {
    const section = "x".repeat(60 * 1024);
    const started = performance.now();
    expect(() => render(`{{#items}}${section}{{/items}}`, { items: Array(90_000).fill(1) })).toThrow(RenderTooLarge);
    expect(() => render("{{a}}".repeat(10_000), { a: "y".repeat(900 * 1024) })).toThrow(RenderTooLarge);
    expect(() => render("{{&a}}{{&a}}", { a: "y".repeat(300 * 1024) })).toThrow(RenderTooLarge);
    expect(() => render("{{> content}}{{> content}}", {}, "z".repeat(300 * 1024))).toThrow(RenderTooLarge);
    // Generous for a loaded machine: before, these took seconds and ended in "Invalid string length".
    expect(performance.now() - started).toBeLessThan(2000);
    // A render within the bound, after one that was stopped, starts its count afresh.
    expect(render("{{a}}{{a}}", { a: "y".repeat(200 * 1024) })).toHaveLength(400 * 1024);
  });
});
