// Counts the words of `input.text` in steps, reporting progress as it goes.
// Deploy with progress.manifest.json; invoke with {"input": {"text": "...", "steps": 4}}.
export default async (input, ctx) => {
  const words = String(input?.text ?? "")
    .split(/\s+/)
    .filter(Boolean);
  const steps = Math.max(1, Math.min(10, Number(input?.steps ?? 4)));
  const counts = {};
  const size = Math.ceil(words.length / steps) || 1;
  for (let step = 0; step < steps; step++) {
    for (const word of words.slice(step * size, (step + 1) * size)) {
      const w = word.toLowerCase();
      counts[w] = (counts[w] ?? 0) + 1;
    }
    ctx.progress(Math.round(((step + 1) / steps) * 100), `step ${step + 1} of ${steps}`);
  }
  ctx.log("counted", words.length, "words");
  return { words: words.length, distinct: Object.keys(counts).length, counts };
};
