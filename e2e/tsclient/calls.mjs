// Drives the gateway with the official TypeScript SDK client, which
// validates every structuredContent against the tool's outputSchema and
// rejects the result (McpError -32602) when it does not fit.
//
//   node calls.mjs URL CALLS_JSON
//
// CALLS_JSON is [{"name": tool, "arguments": {...}}, ...]. It prints one
// JSON line per call: {"name", "ok": true, "isError", "structured", "text"}
// or {"name", "ok": false, "error": message} when the SDK threw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, callsJSON] = process.argv.slice(2);
const client = new Client({ name: "mcp-gateway-e2e", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
// callTool validates against the outputSchema that listTools cached.
await client.listTools();
for (const call of JSON.parse(callsJSON)) {
  try {
    const res = await client.callTool(call);
    const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    console.log(JSON.stringify({ name: call.name, ok: true, isError: !!res.isError, structured: res.structuredContent ?? null, text }));
  } catch (e) {
    console.log(JSON.stringify({ name: call.name, ok: false, error: String(e?.message ?? e) }));
  }
}
await client.close();
