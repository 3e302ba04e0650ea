// Contract check: the official Composio JS SDK (`@composio/core`, pinned in package.json /
// package-lock.json beside this file; it needs node >= 22.22.3) against our Composio fake.
//
// Run by tests/providers/run.sh with the fake served (`cargo run -p tool-providers --example
// serve_fake -- composio --key <key>`) and
//     FAKE_URL=http://127.0.0.1:PORT FAKE_KEY=ak_... node tests/providers/js/contract_composio.mjs
//
// Strictness: `@composio/core` validates what it turns into its own camelCase models with zod
// and, on a mismatch, only logs "Transform validation failed" and goes on with the raw data. The
// SDK's logger is pointed at a sink here and any warning or error it logs fails the run. Raw
// client answers (`composio.client`, which does not validate) have their envelopes checked
// field by field.
//
// Nothing may leave the machine: telemetry is off (`allowTracking: false`, TELEMETRY_DISABLED),
// the npm version check is off (`disableVersionCheck: true`), and `fetch` is wrapped so that any
// request to another origin than FAKE_URL fails the run (and every request is bounded to 15 s).
// Exits 0 when every step holds, 1 naming the failed step, 2 on a bad setup.

const PINNED = '0.21.0';
// @composio/core 0.21.0 declares @composio/client 2.0.0-rc.8, which the registry does not serve:
// package.json overrides it with the newest published one.
const PINNED_CLIENT = '2.0.0-rc.6';

for (const name of ['COMPOSIO_BASE_URL', 'COMPOSIO_API_KEY', 'COMPOSIO_USER_API_KEY', 'COMPOSIO_ORG_API_KEY', 'COMPOSIO_CUSTOM_HEADERS']) {
  delete process.env[name];
}
process.env.TELEMETRY_DISABLED = 'true';
process.env.COMPOSIO_DISABLE_TELEMETRY = 'true';

const url = (process.env.FAKE_URL ?? '').trim();
const key = (process.env.FAKE_KEY ?? '').trim();
if (!url || !key) {
  console.error('contract_composio (js): set FAKE_URL and FAKE_KEY');
  process.exit(2);
}
const origin = new URL(url).origin;

// Every request goes to the fake, bounded in time; anything else is refused and remembered.
const offOrigin = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const target = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (new URL(target).origin !== origin) {
    offOrigin.push(target);
    return Promise.reject(new Error(`contract_composio: refused a request to ${target}`));
  }
  const timeout = AbortSignal.timeout(15_000);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  return realFetch(input, { ...init, signal });
};

let Composio, sdk;
try {
  sdk = await import('@composio/core');
  ({ Composio } = sdk);
} catch (e) {
  console.error(`contract_composio (js): @composio/core is not installed: ${e.message}`);
  process.exit(2);
}
const { readFileSync } = await import('node:fs');
const { fileURLToPath } = await import('node:url');
const corePackage = new URL('../package.json', import.meta.resolve('@composio/core'));
const version = JSON.parse(readFileSync(fileURLToPath(corePackage), 'utf8')).version;
const clientPackage = new URL('../package.json', import.meta.resolve('@composio/client'));
const clientVersion = JSON.parse(readFileSync(fileURLToPath(clientPackage), 'utf8')).version;
if (version !== PINNED || clientVersion !== PINNED_CLIENT) {
  console.error(
    `contract_composio (js): @composio/core ${version} with @composio/client ${clientVersion} installed; ` +
      `this check is pinned to ${PINNED} with ${PINNED_CLIENT}`,
  );
  process.exit(2);
}

// What the SDK logs at warn or error: each one is a failure (e.g. "Transform validation failed").
const logged = [];
const sink = {
  error: (...a) => logged.push(`error: ${a.map(String).join(' ')}`),
  warn: (...a) => logged.push(`warn: ${a.map(String).join(' ')}`),
  info: () => {},
  debug: () => {},
};

let STEP = 'start';

function check(condition, message) {
  if (!condition) throw new Error(message);
}

const j = (v) => JSON.stringify(v);

/** The list envelope of Composio's v3.1 API (`items`, `next_cursor`, page counts). */
function envelope(page, what) {
  check(page && Array.isArray(page.items), `${what}: items is an array: ${j(page)?.slice(0, 300)}`);
  check(page.next_cursor === null || typeof page.next_cursor === 'string', `${what}: next_cursor is a string or null`);
  for (const k of ['total_pages', 'current_page', 'total_items']) {
    check(typeof page[k] === 'number', `${what}: ${k} is a number: ${j(page[k])}`);
  }
  return page;
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  return null;
}

const describe = (e) => `${e?.constructor?.name}: ${e?.message}${e?.cause ? ` (cause ${e.cause.constructor?.name}: ${e.cause.message})` : ''}`;

async function main() {
  const composio = new Composio({
    apiKey: key,
    baseURL: url,
    allowTracking: false,
    disableVersionCheck: true,
    toolkitVersions: '20260101_00',
    logger: sink,
    logLevel: 'warn',
  });
  const raw = composio.getClient ? composio.getClient() : composio.client;

  STEP = 'list toolkits';
  const toolkits = await composio.toolkits.get();
  const slugs = toolkits.map((t) => t.slug);
  check(slugs.includes('github') && slugs.includes('gmail'), `toolkits: ${j(slugs)}`);
  check(toolkits[0].meta.logo.startsWith('https://'), `toolkit meta.logo: ${j(toolkits[0].meta)}`);
  check(toolkits.find((t) => t.slug === 'hackernews')?.noAuth === true, 'hackernews is noAuth');
  envelope(await raw.toolkits.list(), 'raw toolkits.list');

  STEP = 'get one toolkit';
  const zendesk = await composio.toolkits.get('zendesk');
  check(zendesk.slug === 'zendesk' && zendesk.name === 'Zendesk', `zendesk: ${j(zendesk).slice(0, 300)}`);
  const details = zendesk.authConfigDetails;
  check(Array.isArray(details) && details.length === 1 && details[0].mode === 'API_KEY', `authConfigDetails: ${j(details)}`);
  const fields = details[0].fields.connectedAccountInitiation.required;
  check(j(fields.map((f) => f.name)) === '["subdomain","generic_api_key"]', `zendesk fields: ${j(fields)}`);
  check(fields.every((f) => f.required === true && f.type === 'string'), `zendesk field types: ${j(fields)}`);
  const missingKit = await rejection(composio.toolkits.get('nope'));
  check(missingKit !== null, 'an unknown toolkit is not an error');

  STEP = 'list tools, two pages';
  const first = envelope(await raw.tools.list({ limit: 3 }), 'first page');
  check(first.items.length === 3 && first.next_cursor, `first page: ${first.items.length} items, cursor ${j(first.next_cursor)}`);
  const second = envelope(await raw.tools.list({ limit: 3, cursor: first.next_cursor }), 'second page');
  check(second.items.length === 3, `second page: ${second.items.length} items`);
  const seen = [...first.items, ...second.items].map((t) => t.slug);
  check(new Set(seen).size === 6, `pages overlap: ${j(seen)}`);
  check(first.total_items === 8 && first.current_page === 1, `envelope: ${first.total_items} ${first.current_page}`);
  const gmail = await composio.tools.getRawComposioTools({ toolkits: ['gmail'] });
  check(j(gmail.map((t) => t.slug).sort()) === '["GMAIL_FETCH_EMAILS","GMAIL_SEND_EMAIL"]', `gmail tools: ${j(gmail.map((t) => t.slug))}`);
  const picked = await composio.tools.getRawComposioTools({ tools: ['SLACK_SEND_MESSAGE', 'GITHUB_GET_REPO'] });
  check(j(picked.map((t) => t.slug).sort()) === '["GITHUB_GET_REPO","SLACK_SEND_MESSAGE"]', `tools by slug: ${j(picked.map((t) => t.slug))}`);

  STEP = 'get one tool';
  const tool = await composio.tools.getRawComposioToolBySlug('GITHUB_CREATE_ISSUE');
  check(j(tool.inputParameters?.required) === '["owner","repo","title"]', `inputParameters: ${j(tool.inputParameters)}`);
  check(tool.inputParameters.properties.title.type === 'string', `title parameter: ${j(tool.inputParameters.properties)}`);
  check(tool.toolkit?.slug === 'github' && tool.version === '20260101_00', `tool toolkit/version: ${j(tool.toolkit)} ${tool.version}`);
  check(tool.outputParameters?.properties?.data?.properties?.number?.type === 'integer', `outputParameters: ${j(tool.outputParameters)}`);
  const rawTool = await raw.tools.retrieve('GITHUB_CREATE_ISSUE');
  check(rawTool.slug === 'GITHUB_CREATE_ISSUE' && rawTool.no_auth === false, `raw tools.retrieve: ${j(rawTool).slice(0, 300)}`);
  const missingTool = await rejection(composio.tools.getRawComposioToolBySlug('GITHUB_NOPE'));
  check(missingTool !== null, 'an unknown tool is not an error');

  STEP = 'execute for a user with a connected account';
  const result = await composio.tools.execute('GITHUB_CREATE_ISSUE', {
    userId: 'sdk-user',
    arguments: { owner: 'octo', repo: 'hello', title: 'Bug' },
  });
  check(result.successful === true && result.error === null, `execute: ${j(result)}`);
  check(result.data.number === 7 && result.data.url === 'https://github.example/octo/hello/issues/7', `execute data: ${j(result.data)}`);
  const failed = await composio.tools.execute('GITHUB_CREATE_ISSUE', {
    userId: 'sdk-user',
    arguments: { owner: 'octo', repo: 'hello', title: 'fail' },
    version: '20260101_00',
  });
  check(failed.successful === false && failed.error?.includes('Validation Failed'), `a tool error: ${j(failed)}`);
  const hn = await raw.tools.execute('HACKERNEWS_GET_FRONTPAGE', { arguments: {}, user_id: 'sdk-user', version: '20260101_00' });
  check(hn.successful === true && hn.data?.stories?.[0]?.title === 'Hello' && typeof hn.log_id === 'string', `raw execute: ${j(hn)}`);

  STEP = 'execute without a connected account';
  const missing = await rejection(
    composio.tools.execute('GMAIL_SEND_EMAIL', { userId: 'nobody', arguments: { recipient_email: 'a@b.c', body: 'hi' } }),
  );
  check(missing !== null, 'executing without a connected account succeeded');
  check(missing.constructor.name === 'ComposioConnectedAccountNotFoundError', `missing account: ${describe(missing)}`);
  check(missing.message.includes('No connected account found'), `missing account message: ${describe(missing)}`);

  STEP = 'list auth configs';
  const configs = await composio.authConfigs.list({ toolkit: 'slack' });
  check(configs.items.length === 2 && configs.items.every((c) => c.status === 'ENABLED'), `slack configs: ${j(configs.items)}`);
  check(configs.items.every((c) => c.toolkit.slug === 'slack'), 'slack configs are slack');
  const githubConfig = (await composio.authConfigs.list({ toolkit: 'github' })).items[0];
  check(githubConfig.id === 'ac_github' && githubConfig.authScheme === 'OAUTH2', `github config: ${j(githubConfig)}`);
  check(githubConfig.isComposioManaged === false, `github config isComposioManaged: ${j(githubConfig)}`);

  STEP = 'initiate a connected account';
  const request = await composio.connectedAccounts.initiate('sdk-new', 'ac_github');
  check(request.id.startsWith('ca_') && request.status === 'INITIATED', `initiate: ${request.id} ${request.status}`);
  check(request.redirectUrl?.startsWith('https://'), `redirectUrl: ${request.redirectUrl}`);
  const again = await rejection(composio.connectedAccounts.initiate('sdk-user', 'ac_github'));
  check(again?.constructor?.name === 'ComposioMultipleConnectedAccountsError', `a second account without allowMultiple: ${describe(again)}`);

  STEP = 'link a connected account';
  const linked = await composio.connectedAccounts.link('sdk-new', 'ac_gmail');
  check(linked.id.startsWith('ca_') && (linked.redirectUrl ?? '').includes('/link/'), `link: ${linked.id} ${linked.redirectUrl}`);

  STEP = 'get a connected account';
  const account = await composio.connectedAccounts.get(request.id);
  check(account.id === request.id && account.status === 'INITIATED' && account.toolkit.slug === 'github', `get: ${j(account)}`);
  check(account.authConfig.id === 'ac_github' && account.isDisabled === false, `get: authConfig ${j(account.authConfig)}`);
  check(account.state?.authScheme === 'OAUTH2', `get: state ${j(account.state)}`);
  const rawAccount = await raw.connectedAccounts.retrieve(request.id);
  check(rawAccount.user_id === 'sdk-new', `raw get: user_id ${j(rawAccount.user_id)}`);

  STEP = 'list connected accounts';
  const listed = await composio.connectedAccounts.list({ userIds: ['sdk-new'], toolkitSlugs: ['github', 'gmail'] });
  const ids = listed.items.map((a) => a.id).sort();
  check(j(ids) === j([request.id, linked.id].sort()), `list: ${j(ids)}`);
  check(listed.nextCursor === null || listed.nextCursor === undefined, `list nextCursor: ${j(listed.nextCursor)}`);
  const others = await composio.connectedAccounts.list({ userIds: ['sdk-user'] });
  check(j(others.items.map((a) => a.toolkit.slug)) === '["github"]', `list by another user: ${j(others.items)}`);
  const active = await composio.connectedAccounts.list({ statuses: ['ACTIVE'] });
  check(active.items.every((a) => a.status === 'ACTIVE') && active.items.length === 1, `list by status: ${j(active.items)}`);

  STEP = 'delete a connected account';
  const deleted = await composio.connectedAccounts.delete(request.id);
  check(deleted.success === true, `delete: ${j(deleted)}`);
  const gone = await rejection(composio.connectedAccounts.get(request.id));
  check(gone !== null && (gone.status === 404 || gone.cause?.status === 404), `deleted account still readable: ${describe(gone)}`);

  STEP = 'a wrong key is refused';
  const wrong = new Composio({ apiKey: 'ak_wrong', baseURL: url, allowTracking: false, disableVersionCheck: true, logger: sink, logLevel: 'warn' });
  const refused = await rejection(wrong.toolkits.get());
  const status = refused?.status ?? refused?.cause?.status;
  check(status === 401, `wrong key: ${describe(refused)}`);

  STEP = 'nothing left the machine and the SDK logged no warning';
  check(offOrigin.length === 0, `requests to other origins: ${j(offOrigin)}`);
  check(logged.length === 0, `the SDK logged:\n${logged.join('\n')}`);

  console.log(
    `contract_composio (js): @composio/core ${version}: ok (toolkits, tools, execute, auth configs, connected accounts)`,
  );
}

try {
  await main();
  process.exit(0);
} catch (e) {
  console.error(e?.stack ?? e);
  if (logged.length) console.error(`the SDK logged:\n${logged.join('\n')}`);
  if (offOrigin.length) console.error(`requests to other origins: ${j(offOrigin)}`);
  console.error(`contract_composio (js): FAILED at step '${STEP}': ${e?.message ?? e}`);
  process.exit(1);
}
