// SPDX-License-Identifier: MIT
// The official MCP TypeScript SDK's client as the bridge's peer: over
// stdio to a bridge it starts (connectBridge), or to a daemon over
// Streamable HTTP (the key in a header) or WebSocket (the key in the URL);
// and the parts of a tool result the tests read.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bridgeBin, bridgeEnv } from './bridge.mjs';

// lizard-bridge stdio as an MCP server, with the official SDK client (bin:
// another build's binary, for a bench that compares two).
export async function connectBridge(args = [], { env = {}, bin = bridgeBin } = {}) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ['stdio', ...args],
    env: bridgeEnv(env),
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr.on('data', (d) => {
    log += d;
    if (process.env.LIZARD_TEST_VERBOSE) process.stderr.write(d);
  });
  const client = new Client({ name: 'lizard-bridge-tests', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    get log() {
      return log;
    },
    pid: transport.pid,
    call: (name, args = {}) => client.callTool({ name, arguments: args }),
    async close() {
      await client.close();
    },
  };
}

// MCP SDK clients for a daemon (bridge.mjs's startDaemon): Streamable HTTP
// with the key in a header, or WebSocket with the key in the URL (Node 20
// needs ws as WebSocket).
export async function httpClient(daemon, name = 'http-test') {
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${daemon.key}` } },
  }));
  return wrapClient(client);
}

export async function wsClient(daemon, name = 'ws-test') {
  const { default: WebSocket } = await import('ws');
  globalThis.WebSocket ??= WebSocket;
  const { WebSocketClientTransport } = await import('@modelcontextprotocol/sdk/client/websocket.js');
  const client = new Client({ name, version: '1.0.0' });
  const url = new URL(`${daemon.url.replace('http://', 'ws://')}/mcp`);
  url.searchParams.set('access_token', daemon.key);
  await client.connect(new WebSocketClientTransport(url));
  return wrapClient(client);
}

function wrapClient(client) {
  return {
    client,
    call: (name, args = {}) => client.callTool({ name, arguments: args }, undefined, { timeout: 120000 }),
    close: () => client.close(),
  };
}

// client.call that fails on a tool error and gives the structured result.
export function strictCall(client) {
  return async (tool, args) => {
    const r = await client.call(tool, args);
    if (r.isError) throw new Error(`${tool}: ${textOf(r)}`);
    return r.structuredContent;
  };
}

// The text of a tool result's first text block.
export function textOf(result) {
  const block = result.content.find((c) => c.type === 'text');
  return block ? block.text : '';
}

export function imageOf(result) {
  return result.content.find((c) => c.type === 'image');
}
