// The smallest agent: answers its input. A JSON object result becomes result_json as it is;
// anything else is given as {"value": ...}.
export default async (input) => ({ echo: input ?? null, at: new Date().toISOString() });
