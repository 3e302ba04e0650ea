// Mastra's `createTool().execute` for the same three-field tool as the criterion bench
// `call_overhead` (`bench-forecast`): JSON text in, Zod validation of input and output (Mastra
// validates both inside `execute`), JSON text out. Prints one JSON line per measured function:
// {"name", "median_ns", "mean_ns", "samples"}.
import { createTool } from "@mastra/core/tools";
import { z } from "zod";

const ARGS = '{"city": "Lisbon", "days": 3, "metric": true}';

const forecast = createTool({
  id: "bench-forecast",
  description: "Forecast for a city",
  inputSchema: z.object({
    city: z.string().describe("City name"),
    days: z.number().int().min(0).max(4294967295).describe("Days ahead"),
    metric: z.boolean().describe("Metric units"),
  }),
  outputSchema: z.object({ city: z.string(), days: z.number().int(), high: z.number(), summary: z.string() }),
  execute: async (input) => ({
    city: input.city,
    days: input.days,
    high: input.metric ? 21.5 : 70.7,
    summary: "sunny",
  }),
});

// The same work done by hand: the baseline on the Node side.
const direct = async (input) => ({ city: input.city, days: input.days, high: input.metric ? 21.5 : 70.7, summary: "sunny" });

const check = JSON.parse(JSON.stringify(await forecast.execute(JSON.parse(ARGS), {})));
if (check.error || check.city !== "Lisbon") throw new Error(`unexpected result: ${JSON.stringify(check)}`);

// Batches of calls timed together (no per-call timer or harness overhead), after a warm-up;
// the median batch, per call.
const rounds = Number(process.env.BENCH_ROUNDS ?? "30");
const batch = Number(process.env.BENCH_BATCH ?? "20000");
async function measure(name, fn) {
  for (let i = 0; i < batch * 5; i++) await fn();
  const perCall = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) await fn();
    perCall.push(Number(process.hrtime.bigint() - start) / batch);
  }
  perCall.sort((a, b) => a - b);
  const median = perCall[Math.floor(rounds / 2)];
  console.log(JSON.stringify({ name, median_ns: Math.round(median), min_ns: Math.round(perCall[0]), max_ns: Math.round(perCall[rounds - 1]), calls: rounds * batch }));
}
await measure("mastra_create_tool_execute", async () => JSON.stringify(await forecast.execute(JSON.parse(ARGS), {})));
await measure("node_baseline_direct", async () => JSON.stringify(await direct(JSON.parse(ARGS))));
