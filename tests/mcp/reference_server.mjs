#!/usr/bin/env node
// Reference MCP server for validating the test drivers in this directory
// before (and independently of) the C implementation of `execbox mcp`.
//
// It mimics the CLI of the real server so every driver can be pointed at
// either one:
//   node reference_server.mjs [mcp] [--runtime X]                      # stdio
//   node reference_server.mjs [mcp] [--runtime X] --http 127.0.0.1:PORT  # Streamable HTTP at /mcp
// (PORT 0 picks a free port; the URL is printed on stderr either way.)
//
// It exposes one tool, execute_code, with the same contract as execbox:
// the code runs as `python3 -u -c CODE` on the host (NO sandbox: this is a
// test fixture only, it binds to loopback and must never be deployed).
// The low-level Server API is used (not McpServer + zod) so that the JSON
// schemas and error codes are exactly the ones the C server must produce.

import { spawn } from 'node:child_process';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const OUTPUT_CAP = 64 * 1024; // bytes of combined stdout+stderr kept
const DEFAULT_TIMEOUT_MS = 60_000;
const PROGRESS_INTERVAL_MS = 500;

const EXECUTE_CODE_TOOL = {
  name: 'execute_code',
  title: 'Execute code',
  description:
    'Run a program in a fresh sandbox and return its exit code and combined stdout/stderr.',
  inputSchema: {
    type: 'object',
    properties: {
      language: { type: 'string', enum: ['python'], description: 'Language of the program.' },
      code: { type: 'string', description: 'Source code of the program.' },
      timeout_ms: { type: 'integer', minimum: 1, description: 'Wall-clock limit in milliseconds.' },
    },
    required: ['language', 'code'],
  },
  outputSchema: {
    type: 'object',
    properties: {
      exit_code: { type: 'integer' },
      output: { type: 'string' },
      status: { type: 'string' },
      truncated: { type: 'boolean' },
      duration_ms: { type: 'integer' },
      timed_out: { type: 'boolean' },
    },
    required: ['exit_code', 'output', 'status', 'truncated', 'duration_ms'],
  },
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
};

// A tool *execution* failure (bad arguments, unsupported language) is a
// normal result with isError: true, so the model can see and fix it.
function toolError(text) {
  return { isError: true, content: [{ type: 'text', text }] };
}

// Runs CODE with python3; resolves with the structuredContent object.
// Kills the child when `signal` aborts (client sent notifications/cancelled).
function runPython(code, timeoutMs, signal, onTick) {
  return new Promise((resolve) => {
    const started = Date.now();
    // detached: own process group, so kill(-pid) also reaches grandchildren.
    const child = spawn('python3', ['-u', '-c', code], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = Buffer.alloc(0);
    let truncated = false;
    let timedOut = false;
    const append = (chunk) => {
      // Chunks from both pipes are appended in arrival order (interleaved).
      const room = OUTPUT_CAP - output.length;
      if (chunk.length > room) truncated = true;
      if (room > 0) output = Buffer.concat([output, chunk.subarray(0, room)]);
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);

    const killGroup = () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const ticker = setInterval(() => onTick(Date.now() - started), PROGRESS_INTERVAL_MS);
    const onAbort = () => killGroup();
    signal.addEventListener('abort', onAbort, { once: true });

    const finish = (exitCode, statusOverride) => {
      clearTimeout(timer);
      clearInterval(ticker);
      signal.removeEventListener('abort', onAbort);
      let status = exitCode === 0 ? 'ok' : 'nonzero_exit';
      if (statusOverride) status = statusOverride;
      else if (timedOut) status = 'timeout';
      else if (signal.aborted) status = 'cancelled';
      const result = {
        exit_code: exitCode,
        output: output.toString('utf8'),
        status,
        truncated,
        duration_ms: Date.now() - started,
      };
      if (timedOut) result.timed_out = true;
      resolve(result);
    };
    child.on('error', (err) => {
      output = Buffer.from(`failed to start python3: ${err.message}\n`);
      finish(127, 'error');
    });
    // 'close' (not 'exit') so all piped output has been read.
    // Killed by a signal: report 128+signo, like a shell does.
    child.on('close', (code, sig) => finish(code ?? 128 + (osConstants.signals[sig] ?? 0)));
  });
}

// One Server instance per connection (stdio) or per HTTP session.
function createServer() {
  const server = new Server(
    { name: 'execbox', version: '0.0.0-reference' },
    { capabilities: { tools: {} } },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [EXECUTE_CODE_TOOL] }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    // Unknown tool is a protocol error (JSON-RPC -32602), not a tool result.
    if (name !== EXECUTE_CODE_TOOL.name) {
      // (A plain Error with a code: McpError would prefix its message again.)
      throw Object.assign(new Error(`Unknown tool: ${name}`), { code: ErrorCode.InvalidParams });
    }
    const { language, code } = args;
    if (typeof language !== 'string' || typeof code !== 'string') {
      return toolError('execute_code requires string arguments "language" and "code"');
    }
    if (!EXECUTE_CODE_TOOL.inputSchema.properties.language.enum.includes(language)) {
      return toolError(`unsupported language: ${language} (supported: python)`);
    }
    const timeoutMs = Number.isInteger(args.timeout_ms) && args.timeout_ms > 0 ? args.timeout_ms : DEFAULT_TIMEOUT_MS;

    // Progress only when the client asked for it with a progressToken.
    const progressToken = request.params._meta?.progressToken;
    const onTick = (elapsedMs) => {
      if (progressToken === undefined) return;
      extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: elapsedMs, message: `running for ${elapsedMs} ms` },
        })
        .catch(() => {}); // the client may already be gone
    };

    const structuredContent = await runPython(code, timeoutMs, extra.signal, onTick);
    return {
      content: [{ type: 'text', text: JSON.stringify(structuredContent) }],
      structuredContent,
    };
  });
  return server;
}

// ---- transports -----------------------------------------------------------

async function serveStdio() {
  const server = createServer();
  await server.connect(new StdioServerTransport());
  process.stderr.write('reference execbox MCP server on stdio\n');
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (chunks.length === 0) return resolve(undefined);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}

function jsonRpcError(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

// Stateful Streamable HTTP: initialize creates a session (Mcp-Session-Id),
// later POST/GET/DELETE requests are routed to that session's transport.
async function serveHttp(hostPort) {
  const [host, portStr] = hostPort.split(/:(?=\d+$)/);
  const sessions = new Map(); // session id -> transport

  const httpServer = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://localhost');
      if (url.pathname !== '/mcp') return jsonRpcError(res, 404, -32000, 'Not found');
      const sid = req.headers['mcp-session-id'];
      const body = req.method === 'POST' ? await readJson(req) : undefined;

      if (sid && sessions.has(sid)) {
        return await sessions.get(sid).handleRequest(req, res, body);
      }
      if (!sid && req.method === 'POST' && body?.method === 'initialize') {
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await createServer().connect(transport);
        return await transport.handleRequest(req, res, body);
      }
      return jsonRpcError(res, sid ? 404 : 400, -32000, sid ? 'Session not found' : 'Missing session id');
    } catch (e) {
      if (!res.headersSent) jsonRpcError(res, 400, -32700, `Bad request: ${e.message}`);
    }
  });

  await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(Number(portStr), host, resolve);
  });
  const { address, port } = httpServer.address();
  process.stderr.write(`reference execbox MCP server on http://${address}:${port}/mcp\n`);
}

// ---- CLI ------------------------------------------------------------------

const argv = process.argv.slice(2);
if (argv[0] === 'mcp') argv.shift(); // accept `... mcp` like the execbox binary
let httpAddr = null;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--http') httpAddr = argv[++i];
  else if (argv[i] === '--runtime') i++; // accepted and ignored: always host python3
  else {
    process.stderr.write(`usage: reference_server.mjs [mcp] [--runtime R] [--http HOST:PORT]\n`);
    process.exit(2);
  }
}
if (httpAddr) {
  if (!/^127\.\d+\.\d+\.\d+:\d+$/.test(httpAddr)) {
    process.stderr.write('refusing to listen on a non-loopback address\n');
    process.exit(2);
  }
  await serveHttp(httpAddr);
} else {
  await serveStdio();
}
