#!/usr/bin/env node
// Drives an execbox MCP server with the official TypeScript SDK client and
// checks the execute_code contract end to end.
//
//   node sdk_client.mjs stdio -- CMD [ARGS...]   e.g. stdio -- ./build/execbox mcp
//   node sdk_client.mjs http URL                 e.g. http http://127.0.0.1:8765/mcp
//
// Prints `ok - NAME` / `not ok - NAME: reason` per check and a final
// `N passed, N failed` line; exits 1 if any check failed.
// For stdio, the server inherits this process's environment (SANDBOX_ENV
// selects the runtime), unlike the SDK default which passes only a few vars.

import { isDeepStrictEqual } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const TOOL = 'execute_code';
const CHECK_TIMEOUT_MS = 30_000; // no single check may hang the run

// ---- argument parsing -------------------------------------------------------

function usage() {
  process.stderr.write(
    'usage: node sdk_client.mjs stdio -- CMD [ARGS...]\n' +
      '       node sdk_client.mjs http URL\n',
  );
  process.exit(2);
}

const argv = process.argv.slice(2);
let makeTransport;
if (argv[0] === 'stdio') {
  const rest = argv[1] === '--' ? argv.slice(2) : argv.slice(1);
  if (rest.length === 0) usage();
  makeTransport = () =>
    new StdioClientTransport({
      command: rest[0],
      args: rest.slice(1),
      env: { ...process.env },
      stderr: 'inherit', // server diagnostics go to our stderr, results to stdout
    });
} else if (argv[0] === 'http' && argv.length === 2) {
  const url = new URL(argv[1]);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    process.stderr.write('refusing to test a non-loopback URL\n');
    process.exit(2);
  }
  makeTransport = () => new StreamableHTTPClientTransport(url);
} else {
  usage();
}

// ---- tiny check harness ----------------------------------------------------

let passed = 0;
let failed = 0;

class CheckFailure extends Error {}
function assert(cond, msg) {
  if (!cond) throw new CheckFailure(msg);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const show = (v) => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 300 ? `${s.slice(0, 300)}...` : s;
};

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new CheckFailure(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function check(name, fn) {
  try {
    await withTimeout(Promise.resolve().then(fn), CHECK_TIMEOUT_MS, 'check');
    passed++;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    const reason = e instanceof CheckFailure ? e.message : `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`;
    console.log(`not ok - ${name}: ${reason.replace(/\s*\n\s*/g, ' ')}`);
  }
}

// ---- hand-written JSON Schema subset checker ----------------------------
// Covers what a flat tool output schema uses: type (string or array),
// properties, required, enum, additionalProperties:false. Deliberately
// independent of the SDK's own (ajv-based) validation.

function typeOk(value, type) {
  switch (type) {
    case 'integer': return Number.isInteger(value);
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'string': return typeof value === 'string';
    case 'boolean': return typeof value === 'boolean';
    case 'null': return value === null;
    case 'array': return Array.isArray(value);
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value);
    default: return true; // unknown keyword value: do not judge
  }
}

function schemaErrors(value, schema, path = '$') {
  const errs = [];
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeOk(value, t))) {
      errs.push(`${path}: expected ${types.join('|')}, got ${show(value)}`);
      return errs;
    }
  }
  if (schema.enum && !schema.enum.some((e) => isDeepStrictEqual(e, value))) {
    errs.push(`${path}: ${show(value)} not in enum ${show(schema.enum)}`);
  }
  if (typeOk(value, 'object')) {
    for (const key of schema.required ?? []) {
      if (!(key in value)) errs.push(`${path}: missing required property "${key}"`);
    }
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      if (key in value) errs.push(...schemaErrors(value[key], sub, `${path}.${key}`));
    }
    if (schema.additionalProperties === false) {
      for (const key of Object.keys(value)) {
        if (!(key in (schema.properties ?? {}))) errs.push(`${path}: unexpected property "${key}"`);
      }
    }
  }
  return errs;
}

// ---- the checks ------------------------------------------------------------

const client = new Client({ name: 'execbox-sdk-test-client', version: '1.0.0' });
let transport;
let connected = false;
let negotiatedVersion;
let tool; // the execute_code entry from tools/list

const callExec = (args, options) =>
  client.callTool({ name: TOOL, arguments: args }, undefined, options);

function requireConnected() {
  assert(connected, 'not connected (initialize failed)');
}

// Result of a successful run, with the checks common to every such call.
function expectRun(result, { exitCode, status }) {
  assert(result.isError !== true, `isError is true: ${show(result.content)}`);
  const sc = result.structuredContent;
  assert(sc && typeof sc === 'object', `no structuredContent: ${show(result)}`);
  assert(sc.exit_code === exitCode, `exit_code ${show(sc.exit_code)} !== ${exitCode} (output ${show(sc.output)})`);
  assert(sc.status === status, `status ${show(sc.status)} !== ${show(status)}`);
  return sc;
}

await check('initialize', async () => {
  transport = makeTransport();
  // The client reports the negotiated version to the transport through this
  // hook (HTTP needs it for the MCP-Protocol-Version header); tap it there.
  const orig = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    negotiatedVersion = v;
    orig?.(v);
  };
  await withTimeout(client.connect(transport), 15_000, 'initialize');
  connected = true;
  const info = client.getServerVersion();
  assert(info?.name === 'execbox', `serverInfo.name is ${show(info?.name)}, expected "execbox"`);
  assert(typeof negotiatedVersion === 'string' && negotiatedVersion.length > 0,
    `negotiated protocolVersion is ${show(negotiatedVersion)}`);
  // A server that offers tools MUST declare the tools capability.
  const caps = client.getServerCapabilities();
  assert(caps?.tools && typeof caps.tools === 'object', `capabilities.tools missing: ${show(caps)}`);
});

await check('tools/list has execute_code with schemas and annotations', async () => {
  requireConnected();
  const { tools } = await client.listTools(); // also primes the SDK's output validators
  tool = tools.find((t) => t.name === TOOL);
  assert(tool, `no tool named ${TOOL} in ${show(tools.map((t) => t.name))}`);
  const is = tool.inputSchema;
  assert(is?.type === 'object', `inputSchema.type is ${show(is?.type)}`);
  const lang = is.properties?.language;
  assert(lang, 'inputSchema.properties.language missing');
  assert(Array.isArray(lang.enum) && lang.enum.length > 0 && lang.enum.every((x) => typeof x === 'string'),
    `language.enum is not a non-empty array of strings: ${show(lang.enum)}`);
  assert(lang.enum.includes('python'), `language.enum lacks "python": ${show(lang.enum)}`);
  assert(is.properties?.code, 'inputSchema.properties.code missing');
  const req = is.required ?? [];
  assert(req.includes('language') && req.includes('code'), `inputSchema.required is ${show(is.required)}`);
  assert(tool.outputSchema?.type === 'object', `outputSchema.type is ${show(tool.outputSchema?.type)}`);
  assert(tool.annotations?.readOnlyHint === false, `annotations.readOnlyHint is ${show(tool.annotations?.readOnlyHint)}`);
  assert(tool.annotations?.openWorldHint === false, `annotations.openWorldHint is ${show(tool.annotations?.openWorldHint)}`);
});

await check('execute_code python print(6*7)', async () => {
  requireConnected();
  assert(tool, 'execute_code not listed');
  // callTool validates structuredContent against outputSchema itself (the
  // SDK throws McpError on mismatch), so a schema violation fails here too.
  const result = await callExec({ language: 'python', code: 'print(6*7)' });
  const sc = expectRun(result, { exitCode: 0, status: 'ok' });
  assert(sc.output === '42\n', `output ${show(sc.output)} !== "42\\n"`);
  const c0 = result.content?.[0];
  assert(c0?.type === 'text', `content[0].type is ${show(c0?.type)}`);
  let parsed;
  try {
    parsed = JSON.parse(c0.text);
  } catch (e) {
    throw new CheckFailure(`content[0].text is not JSON: ${show(c0.text)}`);
  }
  assert(isDeepStrictEqual(parsed, sc), `content[0].text ${show(parsed)} differs from structuredContent ${show(sc)}`);

  // Our own validation against the advertised outputSchema ...
  const errs = schemaErrors(sc, tool.outputSchema);
  assert(errs.length === 0, `structuredContent violates outputSchema: ${errs.join('; ')}`);
  // ... and proof that the schema actually constrains the result: a copy with
  // exit_code as a string must be rejected (by us and by the SDK validator).
  const bad = { ...sc, exit_code: String(sc.exit_code) };
  assert(schemaErrors(bad, tool.outputSchema).length > 0,
    'outputSchema does not constrain exit_code to a number (mutated result passed)');
  const sdkValidator = client.getToolOutputValidator?.(TOOL);
  if (sdkValidator) {
    assert(sdkValidator(sc).valid, 'SDK validator rejects the real structuredContent');
    assert(!sdkValidator(bad).valid, 'SDK validator accepts a mutated structuredContent');
  }
});

await check('execute_code non-zero exit is a normal result', async () => {
  requireConnected();
  const result = await callExec({
    language: 'python',
    code: "import sys; print('bad', file=sys.stderr); sys.exit(3)",
  });
  const sc = expectRun(result, { exitCode: 3, status: 'nonzero_exit' });
  assert(typeof sc.output === 'string' && sc.output.includes('bad'), `output lacks "bad": ${show(sc.output)}`);
});

await check('execute_code invalid language is a tool error', async () => {
  requireConnected();
  const result = await callExec({ language: 'cobol', code: 'DISPLAY "HI".' });
  assert(result.isError === true, `isError is ${show(result.isError)}: ${show(result)}`);
  const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert(text.toLowerCase().includes('cobol'), `error text does not mention cobol: ${show(text)}`);
});

await check('unknown tool is JSON-RPC error -32602', async () => {
  requireConnected();
  let err;
  try {
    const r = await client.callTool({ name: 'nope', arguments: {} });
    throw new CheckFailure(`call succeeded instead of failing: ${show(r)}`);
  } catch (e) {
    if (e instanceof CheckFailure) throw e;
    err = e;
  }
  assert(err instanceof McpError, `rejected with ${err?.constructor?.name}: ${err?.message}`);
  assert(err.code === -32602, `error code ${err.code} !== -32602 (${err.message})`);
});

await check('progress notifications during a long run', async () => {
  requireConnected();
  const progress = [];
  const result = await callExec(
    { language: 'python', code: 'import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(1)' },
    { onprogress: (p) => progress.push(p) }, // makes the SDK send _meta.progressToken
  );
  // The SDK drops progress for a request once its response arrived, so
  // anything recorded here came before the result.
  const before = progress.length;
  const sc = expectRun(result, { exitCode: 0, status: 'ok' });
  assert(before >= 1, 'no progress notification arrived before the result');
  assert(sc.output === '0\n1\n2\n', `output ${show(sc.output)}`);
  for (let i = 1; i < progress.length; i++) {
    assert(progress[i].progress > progress[i - 1].progress, `progress not increasing: ${show(progress)}`);
  }
});

await check('cancellation stops the call and the server stays healthy', async () => {
  requireConnected();
  const ac = new AbortController();
  let settledAt = null;
  let outcome;
  const call = callExec({ language: 'python', code: 'import time; time.sleep(30)' }, { signal: ac.signal }).then(
    (r) => { settledAt = Date.now(); outcome = { ok: r }; },
    (e) => { settledAt = Date.now(); outcome = { err: e }; },
  );
  await sleep(1000);
  assert(settledAt === null, `call settled before the abort: ${show(outcome?.ok ?? outcome?.err?.message)}`);
  const abortedAt = Date.now();
  ac.abort(); // SDK rejects locally and sends notifications/cancelled
  await withTimeout(call, 2000, 'rejection after abort');
  assert(outcome.err, `call resolved despite abort: ${show(outcome.ok)}`);
  assert(settledAt - abortedAt < 2000, `rejection took ${settledAt - abortedAt} ms`);

  // The server must keep serving after a cancellation.
  const t0 = Date.now();
  const r = await withTimeout(callExec({ language: 'python', code: 'print(1)' }), 5000, 'follow-up call');
  const sc = expectRun(r, { exitCode: 0, status: 'ok' });
  assert(sc.output === '1\n', `follow-up output ${show(sc.output)}`);
  assert(Date.now() - t0 < 5000, 'follow-up call too slow');
});

// Runs after the cancellation check on purpose: if the cancelled sleep(30)
// were still holding a slot, fewer than 3 slots would be free and this
// would serialize (and fail on time).
await check('three concurrent calls run in parallel', async () => {
  requireConnected();
  const t0 = Date.now();
  const results = await Promise.all(
    [1, 2, 3].map((n) => callExec({ language: 'python', code: `import time; time.sleep(1); print(${n})` })),
  );
  const wall = Date.now() - t0;
  results.forEach((r, i) => {
    const sc = expectRun(r, { exitCode: 0, status: 'ok' });
    assert(sc.output === `${i + 1}\n`, `call ${i + 1} output ${show(sc.output)}`);
  });
  assert(wall < 2800, `took ${wall} ms; calls did not run in parallel`);
});

// ---- teardown ----------------------------------------------------------------

try {
  if (connected && transport instanceof StreamableHTTPClientTransport) {
    await withTimeout(transport.terminateSession(), 3000, 'DELETE session').catch(() => {});
  }
  await withTimeout(client.close(), 3000, 'close');
} catch {
  /* closing is best effort; results are already printed */
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
