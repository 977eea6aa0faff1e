// Scenarios that call claimdeck's own MCP tools, run by clients that are
// not claimdeck's Go code, against `claimdeck mcp --http` (mcp.overrides
// on): the official TypeScript SDK's client (npm @modelcontextprotocol/sdk,
// which speaks 2025-11-25 with a session and checks every structured
// result against the tool's output schema), and a client written here from
// the 2026-07-28 specification over fetch (stateless: server/discover, no
// initialize, no session, _meta on every request), whose results the SDK's
// Ajv validator checks the same way.
//
//   node .ci/mcp-scenarios.mjs URL
//
// NODE_PATH names the node_modules holding the SDK (.ci/mcp-conformance
// installs it). Prints one line per scenario and exits 1 if any fails.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";

const require = createRequire(process.env.NODE_PATH + "/");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { AjvJsonSchemaValidator } = require("@modelcontextprotocol/sdk/validation/ajv");

const url = process.argv[2];
if (!url) {
  console.error("usage: node .ci/mcp-scenarios.mjs URL");
  process.exit(2);
}

class Failed extends Error {}
const expect = (ok, what) => {
  if (!ok) throw new Failed(what);
};

// sdkClient: the TypeScript SDK's client, its session initialized.
async function sdkClient() {
  const client = new Client({ name: "claimdeck-ci-scenarios", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  expect(transport.sessionId, "the TypeScript SDK's client got no session");
  return {
    revision: `${transport.protocolVersion} (TypeScript SDK, session)`,
    listTools: async () => (await client.listTools()).tools,
    // callTool validates structuredContent against the listed outputSchema.
    call: (name, args) => client.callTool({ name, arguments: args }),
    close: () => client.close(),
  };
}

// statelessClient: raw JSON-RPC at 2026-07-28, one POST per request.
async function statelessClient() {
  const revision = "2026-07-28";
  let id = 0;
  const sessions = [];
  const validators = new Map();
  const ajv = new AjvJsonSchemaValidator();
  const rpc = async (method, params = {}) => {
    const body = {
      jsonrpc: "2.0", id: ++id, method,
      params: { ...params, _meta: {
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "claimdeck-ci-stateless", version: "1" },
      } },
    };
    const headers = {
      "Content-Type": "application/json", Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": revision, "Mcp-Method": method,
    };
    if (method === "tools/call") headers["Mcp-Name"] = params.name;
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    if (res.headers.get("mcp-session-id")) sessions.push(res.headers.get("mcp-session-id"));
    const text = await res.text();
    const messages = (res.headers.get("content-type") || "").startsWith("text/event-stream")
      ? text.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)))
      : [JSON.parse(text)];
    const msg = messages.find((m) => m.id === body.id);
    expect(msg, `${method}: HTTP ${res.status}, no response in ${text.slice(0, 200)}`);
    expect(!msg.error, `${method}: JSON-RPC error ${JSON.stringify(msg.error)}`);
    return msg.result;
  };
  const discovered = await rpc("server/discover");
  expect(discovered.supportedVersions?.includes(revision), `server/discover lists ${discovered.supportedVersions}`);
  expect(discovered.capabilities?.tools, "server/discover declares no tools capability");
  return {
    revision: `${revision} (stateless, fetch)`,
    listTools: async () => {
      const { tools } = await rpc("tools/list");
      for (const t of tools) if (t.outputSchema) validators.set(t.name, ajv.getValidator(t.outputSchema));
      return tools;
    },
    call: async (name, args) => {
      const result = await rpc("tools/call", { name, arguments: args });
      const v = validators.get(name);
      expect(v, `${name}: no output schema listed`);
      const checked = v(result.structuredContent);
      expect(checked.valid, `${name}: structured content does not match the output schema: ${checked.errorMessage}`);
      return result;
    },
    close: async () => expect(sessions.length === 0, `a stateless client was handed session ids ${sessions}`),
  };
}

// answer is a tool result's structured content, checked against its text.
function answer(result, wantError) {
  expect(result.isError === wantError || (!wantError && result.isError === undefined),
    `isError ${result.isError}, want ${wantError}: ${JSON.stringify(result.content)}`);
  const sc = result.structuredContent;
  expect(sc && typeof sc === "object", "no structured content");
  expect(JSON.stringify(JSON.parse(result.content[0].text)) === JSON.stringify(sc),
    "the text content is not the structured content");
  return sc;
}

const scenarios = {
  // Every tool lists its hints and output schema; every argument says what it is.
  async "tools are documented"(c) {
    const tools = await c.listTools();
    for (const want of ["claim", "heartbeat", "complete", "takeover"]) {
      expect(tools.some((t) => t.name === want), `no ${want} tool`);
    }
    for (const t of tools) {
      expect(t.annotations && typeof t.annotations.readOnlyHint === "boolean" &&
        typeof t.annotations.destructiveHint === "boolean" && typeof t.annotations.idempotentHint === "boolean",
        `${t.name}: annotations ${JSON.stringify(t.annotations)}`);
      expect(t.outputSchema?.type === "object", `${t.name}: no output schema`);
      for (const [arg, p] of Object.entries(t.inputSchema.properties || {})) {
        expect(p.description, `${t.name}: argument ${arg} has no description`);
      }
    }
    const ro = tools.filter((t) => t.annotations.readOnlyHint).map((t) => t.name).sort().join(",");
    expect(ro === "get,list,next", `read-only tools: ${ro}`);
  },
  // create, claim, heartbeat, complete: the task is DONE.
  async "lease cycle"(c) {
    const id = answer(await c.call("create", { title: `lease cycle ${randomUUID()}` }), false).task.page_id;
    const claimed = answer(await c.call("claim", { task: id, agent_name: "CI-A", run_id: "run-1", lease: "1m" }), false).task;
    expect(claimed.status === "IN_PROGRESS" && claimed.lock_token.length === 36, `claim: ${JSON.stringify(claimed)}`);
    const beat = answer(await c.call("heartbeat", { task: id, lock_token: claimed.lock_token, lease: "30m" }), false).task;
    expect(beat.lock_expires > claimed.lock_expires, `heartbeat left the lease at ${beat.lock_expires}`);
    const done = answer(await c.call("complete", { task: id, lock_token: claimed.lock_token, artifacts: "ci" }), false).task;
    expect(done.status === "DONE", `complete: ${done.status}`);
    const got = answer(await c.call("get", { task: id }), false).task;
    expect(got.status === "DONE" && got.artifacts === "ci" && got.lock_token === "", `get after complete: ${JSON.stringify(got)}`);
  },
  // A second agent's claim of a claimed task: CONFLICT, the first keeps it.
  async "CONFLICT"(c) {
    const id = answer(await c.call("create", { title: `conflict ${randomUUID()}` }), false).task.page_id;
    const first = answer(await c.call("claim", { task: id, agent_name: "CI-A" }), false).task;
    const refused = answer(await c.call("claim", { task: id, agent_name: "CI-B" }), true);
    expect(refused.ok === false && refused.error.code === "CONFLICT", `second claim: ${JSON.stringify(refused)}`);
    const got = answer(await c.call("get", { task: id }), false).task;
    expect(got.agent === "CI-A", `after the refused claim the holder is ${got.agent}`);
    answer(await c.call("complete", { task: id, lock_token: first.lock_token }), false);
  },
  // The holder keeps acting after an operator's takeover: its heartbeat and
  // its complete are LOST_LOCK, and the takeover's claim stands.
  async "LOST_LOCK"(c) {
    const id = answer(await c.call("create", { title: `lost lock ${randomUUID()}` }), false).task.page_id;
    const stale = answer(await c.call("claim", { task: id, agent_name: "CI-A" }), false).task.lock_token;
    const taken = answer(await c.call("takeover", { task: id, reason: "ci: agent wedged" }), false).task;
    expect(taken.lock_token !== stale, "the takeover kept the old token");
    for (const [tool, args] of [["heartbeat", {}], ["complete", { artifacts: "late" }]]) {
      const r = answer(await c.call(tool, { task: id, lock_token: stale, ...args }), true);
      expect(r.error.code === "LOST_LOCK", `${tool} with the stale token: ${JSON.stringify(r)}`);
    }
    const got = answer(await c.call("get", { task: id }), false).task;
    expect(got.status === "IN_PROGRESS" && got.claimed_by === "HUMAN", `after the stale writes: ${JSON.stringify(got)}`);
  },
  // A refusal is a tool result with isError, never a JSON-RPC error: an
  // unknown argument names the one meant, an unknown task says so.
  async "isError result"(c) {
    const typo = answer(await c.call("heartbeat", { task: "x", lock_tokn: "y" }), true);
    expect(typo.error.code === "MISCONFIGURED" && typo.error.message.includes("lock_token"), `a mistyped argument: ${JSON.stringify(typo)}`);
    const missing = answer(await c.call("get", { task: `no-such-${randomUUID()}` }), true);
    expect(missing.ok === false && missing.error.message.includes("no such task"), `an unknown task: ${JSON.stringify(missing)}`);
  },
};

let failed = 0;
for (const make of [sdkClient, statelessClient]) {
  let c;
  try {
    c = await make();
  } catch (e) {
    console.log(`✗ ${make.name}: could not connect: ${e.message}`);
    failed++;
    continue;
  }
  for (const [name, run] of Object.entries(scenarios)) {
    try {
      await run(c);
      console.log(`✓ ${c.revision}: ${name}`);
    } catch (e) {
      failed++;
      console.log(`✗ ${c.revision}: ${name}: ${e instanceof Failed ? e.message : e.stack}`);
    }
  }
  try {
    await c.close();
  } catch (e) {
    failed++;
    console.log(`✗ ${c.revision}: ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
