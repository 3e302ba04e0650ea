#!/usr/bin/env node
// Turns exported catalogs (<format>[-variant].json) into TypeScript modules that assign the
// JSON, pasted as an object literal, to the official SDK's own type:
//
//   node gen.mjs [IN_DIR] [OUT_DIR]      (defaults: out out)
//
// Why not `import x from './f.json'`: a JSON import widens literals (`type: "function"`
// becomes `string`), so even correct data fails, and an imported value gets no
// excess-property checks. An object literal written against a declared type gets both:
// every literal is checked against its union of literals, and every object against the
// known properties of its declared type (except where the SDK type has an index
// signature, e.g. JSON-Schema bodies).
//
// The format is the longest known prefix of the file's base name, followed by the end,
// "-" or "." (openai-responses-strict.json -> openai-responses, openai.typo.json -> openai).
// Files of an unknown format (e.g. toolsmith.json: no SDK type exists) are skipped with a note.
import { readFileSync, writeFileSync, readdirSync, mkdirSync } from 'node:fs';
import { join, basename } from 'node:path';

const inDir = process.argv[2] ?? 'out';
const outDir = process.argv[3] ?? inDir;

// A value the literal printer writes as a TypeScript expression instead of a JSON string.
class Expr {
  constructor(code) {
    this.code = code;
  }
}

// An array of tools: printed with a `// tool: NAME` line before each element, so that
// verify.mjs can say which tool an error is in. `label(item, index)` names an element (tool
// results have no name: they are labelled "result #INDEX", in the order check.sh calls them).
class ToolList {
  constructor(items, label = toolName) {
    this.items = items;
    this.label = label;
  }
}
// The catalog with its tool array(s) marked: a bare array, or the array under `key`.
function marked(data, key = 'tools') {
  if (Array.isArray(data)) return new ToolList(data);
  if (data && typeof data === 'object' && Array.isArray(data[key])) return { ...data, [key]: new ToolList(data[key]) };
  return data;
}
const toolName = (t) => (t && typeof t === 'object' ? (t.name ?? t.function?.name) : undefined);

function literal(value, indent = '') {
  if (value instanceof Expr) return value.code;
  if (value instanceof ToolList) {
    if (value.items.length === 0) return '[]';
    const inner = indent + '  ';
    // (U+2028/U+2029 would end a `//` comment: JSON.stringify leaves them, so escape them too.)
    const label = (t, i) => JSON.stringify(String(value.label(t, i) ?? '?')).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
    const item = (t, i) => `${inner}// tool: ${label(t, i)}\n${inner}${literal(t, inner)}`;
    return `[\n${value.items.map(item).join(',\n')}\n${indent}]`;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const inner = indent + '  ';
    return `[\n${value.map((v) => inner + literal(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return '{}';
    const inner = indent + '  ';
    // A literal `__proto__: x` would set the prototype instead of defining a property;
    // the computed form defines a real (and type-checked) property.
    const key = (k) => (k === '__proto__' ? `["__proto__"]` : JSON.stringify(k));
    return `{\n${keys.map((k) => `${inner}${key(k)}: ${literal(value[k], inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}

// ---- Gemini: Schema-typed fields (FunctionDeclaration.parameters / .response) ----
// The SDK types `Schema.type` as the TypeScript string enum `Type` ("STRING", "OBJECT", ...)
// and the int64 bounds (minItems, maxItems, minLength, maxLength, minProperties,
// maxProperties) as `string` (the proto3 JSON canonical form). No JSON literal can ever be
// assigned to a string enum, so without this step every `parameters` would fail. We translate
// exactly those two encodings, and nothing else:
//   - "type": "object" | "OBJECT" -> Type.OBJECT (the SDK's own runtime, processJsonSchema in
//     @google/genai, upper-cases `type` the same way before sending). A value that is no member
//     of `Type` (e.g. "dict") or a type array (["string","null"]) is left as is and so fails.
//   - an int64 bound given as a JSON number -> its decimal string (proto3 JSON accepts both).
// Every other key is left untouched, so `additionalProperties`, `$ref`, `oneOf`, `const`, ...
// still fail as excess properties of `Schema` (the OpenAPI 3.0 subset).
const GEMINI_TYPES = new Set(['TYPE_UNSPECIFIED', 'STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL']);
const GEMINI_INT64 = new Set(['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties']);

const GEMINI_BEHAVIORS = new Set(['UNSPECIFIED', 'BLOCKING', 'NON_BLOCKING']);

function geminiSchema(schema) {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && typeof v === 'string' && GEMINI_TYPES.has(v.toUpperCase())) {
      out[k] = new Expr(`Type.${v.toUpperCase()}`);
    } else if (GEMINI_INT64.has(k) && typeof v === 'number' && Number.isInteger(v)) {
      out[k] = String(v);
    } else if (k === 'items') {
      out[k] = geminiSchema(v);
    } else if (k === 'anyOf' && Array.isArray(v)) {
      out[k] = v.map(geminiSchema);
    } else if (k === 'properties' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, geminiSchema(s)]));
    } else {
      out[k] = v;
    }
  }
  return out;
}

function geminiTool(tool) {
  if (tool === null || typeof tool !== 'object' || !Array.isArray(tool.functionDeclarations)) return tool;
  return {
    ...tool,
    functionDeclarations: tool.functionDeclarations.map((fd) => {
      if (fd === null || typeof fd !== 'object') return fd;
      const copy = { ...fd };
      for (const k of ['parameters', 'response']) if (k in copy) copy[k] = geminiSchema(copy[k]);
      // `behavior` is the TS string enum `Behavior` ("BLOCKING", "NON_BLOCKING"): a known
      // member is written as the enum member, anything else is left to fail.
      if (typeof copy.behavior === 'string' && GEMINI_BEHAVIORS.has(copy.behavior)) copy.behavior = new Expr(`Behavior.${copy.behavior}`);
      return copy;
    }),
  };
}

// ---- the formats ----
// Each returns the module body. `data` is the parsed JSON. A second, non-literal assignment
// to the type the SDK's request method takes (e.g. ChatCompletionTool[], a union) checks that
// the narrow type we used really is accepted there.
const FORMATS = {
  // OpenAI Chat Completions: a JSON array of {type:"function", function:{...}}.
  openai(data) {
    const lines = [
      `import type { ChatCompletionFunctionTool, ChatCompletionTool } from 'openai/resources/chat/completions';`,
    ];
    if (Array.isArray(data)) {
      lines.push(`export const tools: ChatCompletionFunctionTool[] = ${literal(marked(data))};`);
    } else {
      lines.push(`export const catalog: { tools: ChatCompletionFunctionTool[] } = ${literal(marked(data))};`);
      lines.push(`export const tools = catalog.tools;`);
    }
    lines.push(`export const asRequestParam: ChatCompletionTool[] = tools;`);
    return lines;
  },
  // OpenAI Responses: a JSON array of {type:"function", name, parameters, strict, ...}.
  // A tool search export (`*-search*`, `toolsmith catalog --tool-search`) may also hold
  // {type:"namespace", ...} groups and the {type:"tool_search", ...} tool.
  'openai-responses'(data, name) {
    const lines = [
      `import type { FunctionTool, NamespaceTool, ToolSearchTool, Tool } from 'openai/resources/responses/responses';`,
      // The hosted tool a catalog adds once when a tool allows programmatic callers.
      `type Programmatic = Tool.ProgrammaticToolCalling;`,
    ];
    if (name.includes('-search')) {
      lines.push(`export const tools: (FunctionTool | NamespaceTool | ToolSearchTool | Programmatic)[] = ${literal(marked(data))};`);
    } else if (Array.isArray(data)) {
      lines.push(`export const tools: (FunctionTool | Programmatic)[] = ${literal(marked(data))};`);
    } else {
      lines.push(`export const catalog: { tools: (FunctionTool | Programmatic)[] } = ${literal(marked(data))};`);
      lines.push(`export const tools = catalog.tools;`);
    }
    lines.push(`export const asRequestParam: Tool[] = tools;`);
    return lines;
  },
  // Anthropic Messages: a JSON array of {name, description?, input_schema, strict?, input_examples?, ...}.
  // The stable `Tool` (resources/messages) has `strict` and `input_examples` in this SDK
  // version, so the beta `BetaTool` is not needed; it is checked too (non-literal), so a
  // catalog that works on the stable API also works with client.beta.messages.
  // A tool search export (`*-search*`) may also hold the BM25 tool search server tool.
  anthropic(data, name) {
    const lines = [
      `import type { Tool, ToolSearchToolBm25_20251119, ToolUnion, CodeExecutionTool20250825, CodeExecutionTool20260120 } from '@anthropic-ai/sdk/resources/messages';`,
      `import type { BetaToolUnion } from '@anthropic-ai/sdk/resources/beta/messages';`,
      // The code execution tool a catalog adds once when a tool allows programmatic callers.
      `type CodeExecution = CodeExecutionTool20250825 | CodeExecutionTool20260120;`,
    ];
    if (name.includes('-search')) {
      lines.push(`export const tools: (Tool | ToolSearchToolBm25_20251119 | CodeExecution)[] = ${literal(marked(data))};`);
    } else if (Array.isArray(data)) {
      lines.push(`export const tools: (Tool | CodeExecution)[] = ${literal(marked(data))};`);
    } else {
      lines.push(`export const catalog: { tools: (Tool | CodeExecution)[] } = ${literal(marked(data))};`);
      lines.push(`export const tools = catalog.tools;`);
    }
    lines.push(`export const asRequestParam: ToolUnion[] = tools;`);
    lines.push(`export const asBetaRequestParam: BetaToolUnion[] = tools;`);
    return lines;
  },
  // Gemini: {functionDeclarations:[...]} (one tool group) or an array of such groups.
  // `Tool` has only optional fields, so it is intersected with a required
  // functionDeclarations to make `{}` fail.
  gemini(data) {
    const code = Array.isArray(data)
      ? literal(data.map((g) => marked(geminiTool(g), 'functionDeclarations')))
      : `[${literal(marked(geminiTool(data), 'functionDeclarations'))}]`;
    // `Type` and `Behavior` are values (enums): import them only where the literal uses them.
    const typeImport = (code.includes('Type.') ? 'Type, ' : '') + (code.includes('Behavior.') ? 'Behavior, ' : '');
    return [
      `import { ${typeImport}type FunctionDeclaration, type Tool } from '@google/genai';`,
      `type FunctionTool = Tool & { functionDeclarations: FunctionDeclaration[] };`,
      `export const tools: FunctionTool[] = ${code};`,
      `export const asRequestParam: Tool[] = tools;`,
    ];
  },
  // MCP tools/list result: {tools:[...]} (or a bare array of tools).
  // `Tool` from types.js is the zod-inferred type the SDK's server validates with; the
  // spec's own interface (spec.types.js, generated from the MCP schema.ts) is checked too,
  // non-literally: its inputSchema lists only $schema/type/properties/required and has no
  // index signature, so a literal check would reject every other JSON Schema keyword
  // (additionalProperties, $defs, ...) that the JSON schema of the spec allows.
  mcp(data) {
    return [
      `import type { Tool, ListToolsResult } from '@modelcontextprotocol/sdk/types.js';`,
      `import type { Tool as SpecTool, ListToolsResult as SpecListToolsResult } from '@modelcontextprotocol/sdk/spec.types.js';`,
      // \`description\` is optional in both SDK types; required here by this project's rule
      // (PROTOCOLS.md §2: the conformance suite checks that every tool has one).
      `type DescribedTool = Tool & { description: string };`,
      Array.isArray(data)
        ? `export const catalog: { tools: DescribedTool[] } = { tools: ${literal(marked(data), '  ')} };`
        : `export const catalog: { tools: DescribedTool[]; nextCursor?: string } = ${literal(marked(data))};`,
      `export const tools: Tool[] = catalog.tools;`,
      `export const asResult: ListToolsResult = catalog;`,
      `export const asSpecTools: SpecTool[] = tools;`,
      `export const asSpecResult: SpecListToolsResult = catalog;`,
    ];
  },
};

// ---- tool_choice: what `toolsmith catalog --allowed-tools` prints (the tools a request of a
// tool search conversation lets the model call). File base names `choice-<format>`.
Object.assign(FORMATS, {
  'choice-openai'(data) {
    return [
      `import type { ChatCompletionAllowedToolChoice, ChatCompletionToolChoiceOption } from 'openai/resources/chat/completions';`,
      `export const choice: ChatCompletionAllowedToolChoice = ${literal(data)};`,
      `export const asRequestParam: ChatCompletionToolChoiceOption = choice;`,
    ];
  },
  'choice-openai-responses'(data) {
    return [
      `import type { ToolChoiceAllowed, ResponseCreateParams } from 'openai/resources/responses/responses';`,
      `export const choice: ToolChoiceAllowed = ${literal(data)};`,
      `export const asRequestParam: ResponseCreateParams['tool_choice'] = choice;`,
    ];
  },
});

// ---- the answer to a client-executed tool search (`toolsmith catalog --tool-search client
// --answer-search QUERY`): Responses' `tool_search_output` input item (its `tools` the found
// functions), Anthropic's `tool_result` block of `tool_reference` blocks. Base names `answer-<format>`.
Object.assign(FORMATS, {
  'answer-openai-responses'(data) {
    return [
      `import type { ResponseToolSearchOutputItemParam, ResponseInputItem } from 'openai/resources/responses/responses';`,
      `export const answer: ResponseToolSearchOutputItemParam = ${literal(marked(data))};`,
      `export const asInput: ResponseInputItem = answer;`,
    ];
  },
  'answer-anthropic'(data) {
    return [
      `import type { ToolResultBlockParam, ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';`,
      `export const answer: ToolResultBlockParam = ${literal(data)};`,
      `export const asContent: ContentBlockParam = answer;`,
    ];
  },
});

// ---- tool results: what `toolsmith call ID ARGS --as FORMAT` prints, as a JSON array of
// results (check.sh assembles them); a single result object is accepted too. The file base
// names are `result-<format>`: no catalog format is a prefix of them, and the longest-prefix
// rule below picks result-openai-responses over result-openai.
const results = (data) => new ToolList(Array.isArray(data) ? data : [data], (_, i) => `result #${i}`);
Object.assign(FORMATS, {
  // OpenAI Chat Completions: {role:"tool", tool_call_id, content: string | text parts}.
  'result-openai'(data) {
    return [
      `import type { ChatCompletionToolMessageParam, ChatCompletionMessageParam } from 'openai/resources/chat/completions';`,
      `export const results: ChatCompletionToolMessageParam[] = ${literal(results(data))};`,
      `export const asMessages: ChatCompletionMessageParam[] = results;`,
    ];
  },
  // OpenAI Responses: {type:"function_call_output", call_id, output: string | input_text/
  // input_image/input_file parts}, an item of the request's `input`. `call_id` is optional in
  // the SDK type (absent on items the API returns); on input it pairs the output with its
  // call, so it is required here.
  'result-openai-responses'(data) {
    return [
      `import type { ResponseInputItem, ResponseInput } from 'openai/resources/responses/responses';`,
      `type FunctionCallOutput = ResponseInputItem.FunctionCallOutput & { call_id: string };`,
      `export const results: FunctionCallOutput[] = ${literal(results(data))};`,
      `export const asInput: ResponseInput = results;`,
    ];
  },
  // Anthropic Messages: a tool_result content block of a user message.
  'result-anthropic'(data) {
    return [
      `import type { ToolResultBlockParam, ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';`,
      `import type { BetaContentBlockParam } from '@anthropic-ai/sdk/resources/beta/messages';`,
      `export const results: ToolResultBlockParam[] = ${literal(results(data))};`,
      `export const asContent: ContentBlockParam[] = results;`,
      `export const asBetaContent: BetaContentBlockParam[] = results;`,
    ];
  },
  // MCP tools/call result. Both SDK types (zod-inferred types.js, spec.types.js) inherit an
  // index signature from Result, so a misspelt top-level key (is_error) would pass: the
  // literal is typed with the known keys picked out, then assigned to both full types.
  'result-mcp'(data) {
    return [
      `import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';`,
      `import type { CallToolResult as SpecCallToolResult } from '@modelcontextprotocol/sdk/spec.types.js';`,
      `type KnownCallToolResult = Pick<CallToolResult, 'content' | 'structuredContent' | 'isError' | '_meta'>;`,
      `export const results: KnownCallToolResult[] = ${literal(results(data))};`,
      `export const asResults: CallToolResult[] = results;`,
      `export const asSpecResults: SpecCallToolResult[] = results;`,
    ];
  },
  // Gemini: a functionResponse part of a user content. Every field of the SDK's `Part` and
  // `FunctionResponse` is optional; the API requires `name` and `response` (and toolsmith
  // always writes the call's `id`), so those are required here. The results are then sent as
  // the parts of a `Content` with role "user".
  'result-gemini'(data) {
    return [
      `import type { Content, FunctionResponse, Part } from '@google/genai';`,
      `type Answer = FunctionResponse & { id: string; name: string; response: Record<string, unknown> };`,
      `type FunctionResponsePart = Part & { functionResponse: Answer };`,
      `export const results: FunctionResponsePart[] = ${literal(results(data))};`,
      `export const asParts: Part[] = results;`,
      `export const asContent: Content = { role: 'user', parts: results };`,
    ];
  },
});

const known = Object.keys(FORMATS).sort((a, b) => b.length - a.length);
function formatOf(name) {
  return known.find((f) => name === f || name.startsWith(f + '-') || name.startsWith(f + '.'));
}

mkdirSync(outDir, { recursive: true });
let count = 0;
for (const file of readdirSync(inDir).filter((f) => f.endsWith('.json')).sort()) {
  const name = basename(file, '.json');
  const format = formatOf(name);
  if (!format) {
    console.error(`gen: skipping ${join(inDir, file)} (no SDK type for this format)`);
    continue;
  }
  const data = JSON.parse(readFileSync(join(inDir, file), 'utf8'));
  const body = FORMATS[format](data, name);
  const header = `// Generated by gen.mjs from ${join(inDir, file)} (format ${format}). Do not edit.`;
  writeFileSync(join(outDir, name + '.ts'), [header, ...body, ''].join('\n'));
  count++;
}
console.error(`gen: wrote ${count} module(s) to ${outDir}`);
