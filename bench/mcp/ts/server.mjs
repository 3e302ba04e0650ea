// The benchmark's TypeScript side: the official MCP TypeScript SDK serving one `echo` tool
// ({"text": string} -> the text) over Streamable HTTP at /mcp on 127.0.0.1, with Node's own
// http server (no express) and TCP_NODELAY, as in the SDK's examples.
//
//   PORT=0 node server.mjs            # prints "serving MCP on http://127.0.0.1:PORT/mcp" on stderr
//   MODE=stateful (default) | stateless
//     stateful:  one McpServer + transport per session (mcp-session-id), the SDK's
//                simpleStreamableHttp example shape;
//     stateless: one McpServer + transport per request, the SDK's simpleStatelessStreamableHttp shape.
//   JSON=1     answer with a JSON body instead of an SSE stream (enableJsonResponse).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const MODE = process.env.MODE ?? 'stateful';
const JSON_RESPONSE = process.env.JSON === '1';
if (MODE !== 'stateful' && MODE !== 'stateless') throw new Error(`MODE must be stateful or stateless, not ${MODE}`);

function buildServer() {
  const server = new McpServer({ name: 'ts-bench', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Echo the text back',
    inputSchema: { text: z.string() },
    annotations: { readOnlyHint: true },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
const rpcError = (code, message) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

async function readJson(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return JSON.parse(body);
}

const sessions = new Map(); // session id -> transport (stateful mode)

async function statefulHandler(req, res) {
  const sid = req.headers['mcp-session-id'];
  if (req.method !== 'POST') {
    const transport = sid && sessions.get(sid);
    if (!transport) return send(res, sid ? 404 : 400, rpcError(-32001, 'Session not found'));
    return transport.handleRequest(req, res); // GET (SSE stream) and DELETE (end of session)
  }
  const body = await readJson(req);
  if (sid) {
    const transport = sessions.get(sid);
    if (!transport) return send(res, 404, rpcError(-32001, 'Session not found'));
    return transport.handleRequest(req, res, body);
  }
  if (!isInitializeRequest(body)) return send(res, 400, rpcError(-32000, 'Bad Request: No valid session ID provided'));
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: JSON_RESPONSE,
    onsessioninitialized: (id) => { sessions.set(id, transport); },
  });
  transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
  await buildServer().connect(transport);
  return transport.handleRequest(req, res, body);
}

async function statelessHandler(req, res) {
  if (req.method !== 'POST') return send(res, 405, rpcError(-32000, 'Method not allowed.'));
  const body = await readJson(req);
  const server = buildServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: JSON_RESPONSE });
  res.on('close', () => { transport.close(); server.close(); });
  await server.connect(transport);
  return transport.handleRequest(req, res, body);
}

const handler = MODE === 'stateful' ? statefulHandler : statelessHandler;
const httpServer = http.createServer(async (req, res) => {
  if (new URL(req.url, 'http://x').pathname !== '/mcp') return send(res, 404, rpcError(-32000, 'Not found'));
  try {
    await handler(req, res);
  } catch (err) {
    console.error('error handling MCP request:', err);
    if (!res.headersSent) send(res, 500, rpcError(-32603, 'Internal server error'));
  }
});
httpServer.on('connection', (socket) => socket.setNoDelay(true));
httpServer.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = httpServer.address();
  console.error(`serving MCP on http://127.0.0.1:${port}/mcp (TypeScript SDK, ${MODE}${JSON_RESPONSE ? ', JSON' : ', SSE'})`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
