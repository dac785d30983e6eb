// Drives the gateway's 2024-11-05 HTTP+SSE transport with the official
// TypeScript SDK's SSEClientTransport: once under the SDK's Client (which
// asks for its newest revision) and once as a client that speaks only
// 2024-11-05 (the transport alone, messages written by hand).
//
//   node legacy.mjs SSE_URL CALLS
//
// It prints one JSON line: {"sessionId", "protocolVersion", "tools",
// "calls": [text...], "pinged", "old": {"sessionId", "protocolVersion",
// "text"}}. It exits non-zero if anything throws.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

const [url, calls] = process.argv.slice(2);
const out = {};

const transport = new SSEClientTransport(new URL(url));
const client = new Client({ name: "mcp-gateway-e2e-legacy", version: "1.0.0" });
await client.connect(transport);
out.sessionId = transport._endpoint.searchParams.get("sessionId");
out.protocolVersion = transport._protocolVersion;
out.tools = (await client.listTools()).tools.length;
out.calls = [];
for (let i = 0; i < Number(calls); i++) {
  const res = await client.callTool({ name: "createNote", arguments: { title: `legacy ${i}`, body: "from SSEClientTransport" } });
  if (res.isError) throw new Error(`call ${i} failed: ${JSON.stringify(res)}`);
  out.calls.push(res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n"));
}
await client.ping();
out.pinged = true;
await client.close();

// A 2024-11-05-only client: the transport, and JSON-RPC by hand.
const old = new SSEClientTransport(new URL(url));
const pending = new Map();
old.onmessage = (m) => {
  if (m.id !== undefined && pending.has(m.id)) {
    pending.get(m.id)(m);
    pending.delete(m.id);
  }
};
const request = (id, method, params) =>
  new Promise((resolve, reject) => {
    pending.set(id, resolve);
    old.send({ jsonrpc: "2.0", id, method, params }).catch(reject);
    setTimeout(() => reject(new Error(`no answer to ${method} within 10s`)), 10000).unref();
  });
await old.start();
const init = await request(1, "initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "old", version: "0.1" } });
if (init.error) throw new Error(`initialize: ${JSON.stringify(init.error)}`);
await old.send({ jsonrpc: "2.0", method: "notifications/initialized" });
const listed = await request(2, "tools/call", { name: "listNotes", arguments: {} });
if (listed.error || listed.result.isError) throw new Error(`listNotes: ${JSON.stringify(listed)}`);
out.old = {
  sessionId: old._endpoint.searchParams.get("sessionId"),
  protocolVersion: init.result.protocolVersion,
  text: listed.result.content.map((c) => c.text).join("\n"),
};
await old.close();
console.log(JSON.stringify(out));
