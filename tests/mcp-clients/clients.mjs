#!/usr/bin/env node
// Lists and calls the example tools of `toolsmith serve --stdio` through two MCP clients
// agents use: Mastra's MCPClient (@mastra/mcp, which converts each tool's JSON Schema for its
// agents) and the AI SDK's (@ai-sdk/mcp `createMCPClient`, its `tools()` as an agent gets
// them). Fails on a missing tool, a wrong result, and on any warning or error either client
// prints (e.g. `unknown format` from a schema conversion): what a user would see in their logs.
//
//   node clients.mjs TOOLSMITH_BINARY
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport as StdioTransport } from '@ai-sdk/mcp/mcp-stdio';
import { MCPClient } from '@mastra/mcp';

const toolsmith = process.argv[2];
if (!toolsmith) {
  console.error('usage: node clients.mjs TOOLSMITH_BINARY');
  process.exit(2);
}

// Everything the clients print through the console or as process warnings.
const printed = [];
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    printed.push({ level, text: args.map((a) => (a instanceof Error ? a.stack : typeof a === 'string' ? a : JSON.stringify(a))).join(' ') });
    original(...args);
  };
}
process.on('warning', (w) => printed.push({ level: 'process-warning', text: String(w) }));
const ours = (text) => console.info(`mcp-clients: ${text}`);

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};

// Each client: the tool names it lists, and a call of `calculate` and `text-stats`.
const CALLS = [
  ['calculate', { expression: '(2.5 + 3) * 4' }, (text) => text.includes('22')],
  ['text-stats', { text: 'Hello world. Hello again.' }, (text) => text.includes('"words"')],
];
const textOf = (result) => JSON.stringify(result);

async function mastra() {
  const client = new MCPClient({ id: 'toolsmith-check', servers: { toolsmith: { command: toolsmith, args: ['serve', '--stdio'] } } });
  try {
    const tools = await client.listTools();
    const names = Object.keys(tools);
    ours(`mastra lists ${names.length} tools`);
    check(names.length >= 10, `mastra: ${names.length} tools listed`);
    for (const [id, args, ok] of CALLS) {
      const tool = tools[`toolsmith_${id}`];
      check(tool, `mastra: no toolsmith_${id} among ${names.join(', ')}`);
      if (!tool) continue;
      const result = await tool.execute(args, {});
      check(ok(textOf(result)), `mastra: ${id} answered ${textOf(result)}`);
    }
  } finally {
    await client.disconnect();
  }
}

async function aiSdk() {
  const client = await createMCPClient({ transport: new StdioTransport({ command: toolsmith, args: ['serve', '--stdio'] }) });
  try {
    const tools = await client.tools();
    const names = Object.keys(tools);
    ours(`ai-sdk lists ${names.length} tools`);
    check(names.length >= 10, `ai-sdk: ${names.length} tools listed`);
    for (const [id, args, ok] of CALLS) {
      const tool = tools[id];
      check(tool, `ai-sdk: no ${id} among ${names.join(', ')}`);
      if (!tool) continue;
      const result = await tool.execute(args, { toolCallId: `call-${id}`, messages: [] });
      check(ok(textOf(result)), `ai-sdk: ${id} answered ${textOf(result)}`);
    }
  } finally {
    await client.close();
  }
}

for (const [name, run] of [['mastra', mastra], ['ai-sdk', aiSdk]]) {
  try {
    await run();
  } catch (e) {
    failures.push(`${name}: ${e?.stack ?? e}`);
  }
}
const noise = printed.filter((p) => !p.text.startsWith('mcp-clients: ') && (p.level !== 'log' && p.level !== 'info' && p.level !== 'debug' || /warn|unknown format|error/i.test(p.text)));
for (const p of noise) failures.push(`printed (${p.level}): ${p.text}`);
if (failures.length) {
  console.error(`mcp-clients: FAILED\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
ours('ok');
