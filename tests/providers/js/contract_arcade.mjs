// Contract check: the official Arcade JS SDK (`@arcadeai/arcadejs`, pinned in package.json /
// package-lock.json beside this file) against our local Arcade fake.
//
// The fake (tool-providers/tests/support/arcade_fake.rs) is what the Rust provider is tested
// against; this script keeps it honest with the SDK Mastra itself uses. The SDK returns the
// parsed JSON without validating it, so each answer is checked here against the fields the
// SDK's own types (`*.d.mts`) declare required or enumerated, and its values are asserted.
//
// Run by tests/providers/run.sh with the fake served and
//     FAKE_URL=<url> FAKE_KEY=<key> node tests/providers/js/contract_arcade.mjs
// (run.sh installs the SDK into a cache dir and links it as node_modules beside this file).
// Exits 0 when every check holds, 1 naming the first mismatch, 2 on a bad
// setup.

const PINNED = '2.4.1';

let Arcade, version;
try {
  ({ default: Arcade } = await import('@arcadeai/arcadejs'));
  ({ VERSION: version } = await import('@arcadeai/arcadejs/version'));
} catch (e) {
  console.error(`contract_arcade (js): @arcadeai/arcadejs is not installed: ${e.message}`);
  process.exit(2);
}

class Mismatch extends Error {}

function check(condition, what, got) {
  if (!condition) {
    throw new Mismatch(got === undefined ? what : `${what} (got ${JSON.stringify(got)})`);
  }
}

function isString(v) {
  return typeof v === 'string';
}

// The required fields and enums of the SDK's types, as declared in its .d.mts files.
const AUTH_STATUSES = ['not_started', 'pending', 'completed', 'failed'];
const ERROR_KINDS = [
  'TOOLKIT_LOAD_FAILED', 'TOOL_DEFINITION_BAD_DEFINITION', 'TOOL_DEFINITION_BAD_INPUT_SCHEMA',
  'TOOL_DEFINITION_BAD_OUTPUT_SCHEMA', 'TOOL_REQUIREMENTS_NOT_MET', 'TOOL_RUNTIME_BAD_INPUT_VALUE',
  'TOOL_RUNTIME_BAD_OUTPUT_VALUE', 'TOOL_RUNTIME_RETRY', 'TOOL_RUNTIME_CONTEXT_REQUIRED', 'TOOL_RUNTIME_FATAL',
  'CONTEXT_CHECK_FAILED', 'CONTEXT_DENIED', 'UPSTREAM_RUNTIME_BAD_REQUEST', 'UPSTREAM_RUNTIME_AUTH_ERROR',
  'UPSTREAM_RUNTIME_NOT_FOUND', 'UPSTREAM_RUNTIME_VALIDATION_ERROR', 'UPSTREAM_RUNTIME_RATE_LIMIT',
  'UPSTREAM_RUNTIME_SERVER_ERROR', 'UPSTREAM_RUNTIME_UNMAPPED', 'NETWORK_TRANSPORT_RUNTIME_TIMEOUT',
  'NETWORK_TRANSPORT_RUNTIME_UNREACHABLE', 'NETWORK_TRANSPORT_RUNTIME_UNMAPPED', 'UNKNOWN',
];

function valueSchema(v, where) {
  check(v && isString(v.val_type), `${where}: ValueSchema.val_type is required`, v);
  check(v.enum == null || (Array.isArray(v.enum) && v.enum.every(isString)), `${where}: enum is string[]`, v);
  check(v.inner_val_type == null || isString(v.inner_val_type), `${where}: inner_val_type`, v);
}

/** `ToolDefinition`: fully_qualified_name, input, name, qualified_name, toolkit.name required. */
function toolDefinition(t) {
  const w = `ToolDefinition ${t?.qualified_name}`;
  for (const k of ['fully_qualified_name', 'name', 'qualified_name']) check(isString(t?.[k]), `${w}: ${k} is required`, t);
  check(t.input && typeof t.input === 'object', `${w}: input is required`, t);
  check(t.toolkit && isString(t.toolkit.name), `${w}: toolkit.name is required`, t.toolkit);
  for (const p of t.input.parameters ?? []) {
    check(isString(p.name), `${w}: parameter name is required`, p);
    valueSchema(p.value_schema, `${w} parameter ${p.name}`);
  }
  if (t.output?.value_schema != null) valueSchema(t.output.value_schema, `${w} output`);
  const a = t.requirements?.authorization;
  if (a?.status != null) check(['active', 'inactive'].includes(a.status), `${w}: requirements.authorization.status`, a);
  if (a?.token_status != null) check(AUTH_STATUSES.includes(a.token_status), `${w}: token_status`, a);
  for (const s of t.requirements?.secrets ?? []) check(isString(s.key), `${w}: secret key is required`, s);
  return t;
}

/** `AuthorizationResponse`: every field optional; `status` is one of four. */
function authorization(a, where) {
  check(a && typeof a === 'object', `${where}: an AuthorizationResponse object`, a);
  check(a.status == null || AUTH_STATUSES.includes(a.status), `${where}: status`, a.status);
  for (const k of ['id', 'provider_id', 'url', 'user_id']) check(a[k] == null || isString(a[k]), `${where}: ${k}`, a);
  check(a.scopes == null || (Array.isArray(a.scopes) && a.scopes.every(isString)), `${where}: scopes`, a.scopes);
  return a;
}

/** `ExecuteToolResponse`: output.error needs can_retry, kind (enumerated) and message. */
function executeResponse(r) {
  check(r && typeof r === 'object', 'an ExecuteToolResponse object', r);
  check(r.success == null || typeof r.success === 'boolean', 'success is a boolean', r);
  const err = r.output?.error;
  if (err != null) {
    check(typeof err.can_retry === 'boolean', 'output.error.can_retry is required', err);
    check(ERROR_KINDS.includes(err.kind), 'output.error.kind is one of the SDK kinds', err);
    check(isString(err.message), 'output.error.message is required', err);
  }
  if (r.output?.authorization != null) authorization(r.output.authorization, 'output.authorization');
  return r;
}

/** `UserConnectionResponse`: every field optional, typed. */
function userConnection(c) {
  for (const k of ['id', 'connection_id', 'connection_status', 'provider_id', 'provider_type', 'user_id']) {
    check(c[k] == null || isString(c[k]), `UserConnectionResponse.${k}`, c);
  }
  check(c.scopes == null || (Array.isArray(c.scopes) && c.scopes.every(isString)), 'UserConnectionResponse.scopes', c);
  return c;
}

async function collect(pagePromise) {
  const out = [];
  for await (const item of pagePromise) out.push(item);
  return out;
}

async function expectError(promise, ErrorClass, what) {
  try {
    await promise;
  } catch (e) {
    if (e instanceof ErrorClass) return e;
    throw new Mismatch(`${what}: the SDK raised ${e?.constructor?.name}: ${e?.message}`);
  }
  throw new Mismatch(what);
}

async function main() {
  const url = (process.env.FAKE_URL ?? '').trim();
  const key = (process.env.FAKE_KEY ?? '').trim();
  if (!url || !key) {
    console.error('contract_arcade (js): set FAKE_URL and FAKE_KEY');
    return 2;
  }
  if (version !== PINNED) {
    console.error(`contract_arcade (js): @arcadeai/arcadejs ${version} installed; this check is pinned to ${PINNED}`);
    return 2;
  }

  const client = new Arcade({ apiKey: key, baseURL: url, maxRetries: 0, timeout: 30_000 });
  const checks = [];

  // Health.
  async function health() {
    const h = await client.health.check();
    check(h.healthy === true, 'GET /v1/health: healthy is not true', h);
  }

  // Tools: two pages of offset pagination.
  async function listTools() {
    const first = await client.tools.list({ limit: 2 });
    first.items.forEach(toolDefinition);
    const names = first.items.map((t) => t.qualified_name);
    check(JSON.stringify(names) === '["Math.Add","Math.Divide"]', 'first page names', names);
    check(first.total_count === 5, 'total_count', first.total_count);
    check(first.offset === 0, 'first page offset', first.offset);
    check(first.hasNextPage(), 'the SDK sees a next page');
    const second = await first.getNextPage();
    second.items.forEach(toolDefinition);
    const names2 = second.items.map((t) => t.qualified_name);
    check(JSON.stringify(names2) === '["Github.GetRepository","Gmail.ListEmails"]', 'second page names', names2);
    check(second.offset === 2, 'second page offset', second.offset);
    const everything = (await collect(client.tools.list({ limit: 2 }))).map(toolDefinition).map((t) => t.qualified_name);
    check(everything.length === 5 && everything.at(-1) === 'Slack.SendMessage', 'auto-pagination over every page', everything);
    const math = await client.tools.list({ toolkit: 'Math', limit: 10 });
    const kits = math.items.map((t) => t.toolkit.name);
    check(JSON.stringify(kits) === '["Math","Math"]', 'toolkit filter', kits);
    const gh = second.items[0];
    const auth = gh.requirements?.authorization;
    check(auth?.provider_id === 'github', 'Github tools require the github auth provider', auth);
  }

  // One tool's definition.
  async function getTool() {
    const t = toolDefinition(await client.tools.get('Github.GetRepository'));
    check(t.qualified_name === 'Github.GetRepository', 'qualified_name', t.qualified_name);
    check(t.fully_qualified_name === 'Github.GetRepository@1.0.0', 'fully_qualified_name', t.fully_qualified_name);
    check(t.name === 'GetRepository' && t.toolkit.name === 'Github', 'name and toolkit', [t.name, t.toolkit.name]);
    const params = Object.fromEntries((t.input.parameters ?? []).map((p) => [p.name, p]));
    const sorted = Object.keys(params).sort();
    check(JSON.stringify(sorted) === '["archived","filters","include","owner","repo"]', 'parameter names', sorted);
    check(params.owner.required === true && params.owner.value_schema.val_type === 'string', 'owner', params.owner);
    const inc = params.include.value_schema;
    check(inc.val_type === 'array' && inc.inner_val_type === 'string' && JSON.stringify(inc.enum) === '["issues","pulls"]', 'include', inc);
    check(t.output?.value_schema?.val_type === 'json', 'output value_schema', t.output);
    await expectError(client.tools.get('Math.Nope'), Arcade.NotFoundError, 'an unknown tool is not a 404');
  }

  // Execute: success, a tool error, and the two authorization-required forms.
  async function execute() {
    const r = executeResponse(await client.tools.execute({ tool_name: 'Math.Add', input: { a: 2, b: 3 }, user_id: 'sdk-user' }));
    check(r.success === true && r.output?.value === 5, 'Math.Add output.value', r);
    check(r.output.error == null && r.output.authorization == null, 'no error or authorization on success', r.output);
    const e = executeResponse(await client.tools.execute({ tool_name: 'Math.Divide', input: { a: 1, b: 0 }, user_id: 'sdk-user' }));
    const err = e.output?.error;
    check(e.success === false && err != null, 'a tool error is success=false with output.error', e);
    check(err.kind === 'TOOL_RUNTIME_FATAL' && err.can_retry === false, 'error kind and can_retry', err);
    check(err.message === 'Cannot divide by zero' && err.additional_prompt_content, 'error message', err);
    const ok = executeResponse(
      await client.tools.execute({ tool_name: 'Github.GetRepository', input: { owner: 'o', repo: 'r' }, user_id: 'sdk-user' }),
    );
    check(JSON.stringify(ok.output?.value) === '{"full_name":"o/r","user":"sdk-user"}', 'authorized Github run', ok.output);
    const g = executeResponse(await client.tools.execute({ tool_name: 'Gmail.ListEmails', input: {}, user_id: 'sdk-new' }));
    const a = g.output?.authorization;
    check(a?.status === 'pending' && a.url?.includes('sdk-new'), 'output.authorization', g.output);
    const denied = await expectError(
      client.tools.execute({ tool_name: 'Github.GetRepository', input: { owner: 'o', repo: 'r' }, user_id: 'sdk-new' }),
      Arcade.PermissionDeniedError,
      'an unauthorized Github run is not a 403 tool_authorization_required',
    );
    check(denied.status === 403, 'status', denied.status);
    check(denied.error?.name === 'tool_authorization_required', '403 body name', denied.error);
  }

  // Authorize and auth status (with and without the long poll).
  async function authorize() {
    const pending = authorization(await client.tools.authorize({ tool_name: 'Github.GetRepository', user_id: 'sdk-new' }), 'authorize');
    check(pending.status === 'pending' && pending.id === 'ac_sdk-new', 'pending authorization', pending);
    check(pending.url?.includes('state=sdk-new') && pending.user_id === 'sdk-new', 'its URL and user', pending);
    check(pending.provider_id === 'github', 'provider_id', pending.provider_id);
    let s = authorization(await client.auth.status({ id: pending.id }), 'status');
    check(s.status === 'pending' && s.id === pending.id, 'status without wait', s);
    const started = performance.now();
    s = authorization(await client.auth.status({ id: pending.id, wait: 1 }), 'status');
    check(s.status === 'pending', 'status after a 1 s wait', s);
    const waited = (performance.now() - started) / 1000;
    check(waited >= 0.9, 'the wait was honoured', waited);
    const done = authorization(await client.tools.authorize({ tool_name: 'Github.GetRepository', user_id: 'sdk-user' }), 'authorize');
    check(done.status === 'completed' && done.id && !done.url, 'already-authorized user', done);
    s = authorization(await client.auth.status({ id: done.id, wait: 5 }), 'status');
    check(s.status === 'completed', 'a completed flow answers at once', s);
    s = await client.auth.waitForCompletion(done.id);
    check(s.status === 'completed', 'waitForCompletion by id', s);
    s = await client.auth.waitForCompletion(done);
    check(s.status === 'completed' && s.id === done.id, 'waitForCompletion by response', s);
    await expectError(client.auth.status({ id: 'ac_nobody' }), Arcade.NotFoundError, 'an unknown authorization is not a 404');
  }

  // Admin user connections (the JS SDK filters with flat `user_id` / `provider_id`): filtered
  // offset pages, delete, 404 on a second delete.
  async function connections() {
    const uc = client.admin.userConnections;
    const page = await uc.list({ user_id: 'sdk-user', limit: 1 });
    page.items.forEach(userConnection);
    check(page.items.length === 1 && page.total_count === 2 && page.offset === 0, 'first page', page.items);
    const c = page.items[0];
    check(c.id === 'uc_0001' && c.user_id === 'sdk-user' && c.provider_id === 'github', 'first connection', c);
    check(c.connection_status === 'active' && JSON.stringify(c.scopes) === '["read"]', 'its status and scopes', c);
    const mine = (await collect(uc.list({ user_id: 'sdk-user', limit: 1 }))).map(userConnection).map((x) => x.id);
    check(JSON.stringify(mine) === '["uc_0001","uc_0002"]', 'auto-pagination', mine);
    const gh = (await collect(uc.list({ provider_id: 'github' }))).map((x) => x.user_id).sort();
    check(JSON.stringify(gh) === '["sdk-other","sdk-user"]', 'provider filter', gh);
    const both = (await collect(uc.list({ provider_id: 'github', user_id: 'sdk-other' }))).map((x) => x.id);
    check(JSON.stringify(both) === '["uc_0003"]', 'provider and user filters', both);
    const gone = await uc.delete('uc_0002');
    check(gone == null, 'delete returns nothing (a 204)', gone);
    const left = (await collect(uc.list({ user_id: 'sdk-user' }))).map((x) => x.id);
    check(JSON.stringify(left) === '["uc_0001"]', 'deleted connection gone', left);
    await expectError(uc.delete('uc_0002'), Arcade.NotFoundError, 'deleting a missing connection is not a 404');
  }

  // A wrong key is a 401 the SDK understands.
  async function unauthorized() {
    const wrong = new Arcade({ apiKey: 'arc_wrong', baseURL: url, maxRetries: 0, timeout: 10_000 });
    const e = await expectError(wrong.health.check(), Arcade.AuthenticationError, 'a wrong key is not a 401');
    check(e.status === 401, 'status', e.status);
  }

  const groups = [
    ['health', health],
    ['tools.list', listTools],
    ['tools.get', getTool],
    ['tools.execute', execute],
    ['tools.authorize + auth.status', authorize],
    ['admin.userConnections', connections],
    ['authentication', unauthorized],
  ];
  for (const [name, fn] of groups) {
    try {
      await fn();
    } catch (e) {
      const why = e instanceof Mismatch ? e.message
        : e instanceof Arcade.APIError ? `the SDK raised ${e.constructor.name}: ${e.message}`
        : `${e?.constructor?.name}: ${e?.message}`;
      console.error(`contract_arcade (js): MISMATCH in ${name}: ${why}`);
      return 1;
    }
    checks.push(name);
  }
  console.log(`contract_arcade (js): @arcadeai/arcadejs ${version}: ${checks.length} groups passed (${checks.join(', ')})`);
  return 0;
}

process.exit(await main());
