// A real ACP client — the official TypeScript SDK's `client()` over an `ndJsonStream` — driving
// `agent-min acp` through the scenario of tests/it/acp.rs: initialize, session/new, a prompt
// whose permission is granted, a second prompt in the same session whose permission is
// rejected, and a third that is cancelled while its command runs.
//
// ACP_SCENARIO=once: one prompt, ACP_PROMPT. With ACP_FS=1 the client offers its file system
// and holds notes.txt in a buffer with unsaved changes ("unsaved line\n"); what the agent writes
// through fs/write_text_file goes to the buffers, not to the disk.
// ACP_SCENARIO=load: session/load of the saved session ACP_LOAD_ID (its history arrives as
// updates), then one prompt, ACP_PROMPT.
// ACP_SCENARIO=two: two sessions in one process, A and B; A's prompt asks a permission, and
// before answering it the client cancels the idle B (the cancel reaches the agent first, on the
// same stream); then one prompt in B.
// ACP_SCENARIO=interrupt: a prompt, ACP_PROMPT, cancelled once the reply's streamed text (with
// the titles of its tool calls) holds ACP_WAIT_FOR; then a second prompt, ACP_PROMPT2, in the
// same session (with ACP_MCP_AFTER, in a new session whose mcpServers are that JSON array).
// ACP_SCENARIO=prompts: a session (its mcpServers ACP_MCP, a JSON array), then each prompt of
// ACP_PROMPTS (a JSON array: a string is one text block, an array the blocks) in turn.
// ACP_SCENARIO=cancel-when: a session (its mcpServers ACP_MCP), a prompt, ACP_PROMPT, cancelled
// once a call is under way (approved, and the file ACP_MARKER exists).
// ACP_SCENARIO=close: a session (its mcpServers ACP_MCP), a prompt, ACP_PROMPT, whose permission
// request is held while the client closes the session (session/close); whether the MCP server
// whose pid ACP_PIDFILE holds was alive before and after the close; a prompt in the closed
// session; session/load of it, a second session/load while it is open, then a prompt,
// ACP_PROMPT2.
// ACP_NOTES: the buffer's text of notes.txt (default "unsaved line\n").
// ACP_ANSWER: the option chosen in every permission request (default allow_once; the
// `approvals` scenario chooses its own); "never": none is chosen until the prompt it came in
// has been answered, and then the request is answered `cancelled`, as an editor dismisses it.
//
// Usage: node client.mjs SDK_ENTRY TRANSCRIPT WORKSPACE AGENT [AGENT_ARGS...]
// Every line on the wire, both ways, is appended to TRANSCRIPT as {"from": "agent"|"client",
// "line": "..."}; what the client saw is printed on stdout as one JSON object.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, watch as watchDir, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkEntry, transcript, workspace, agentBin, ...agentArgs] = process.argv.slice(2);
const acp = await import(pathToFileURL(sdkEntry).href);

writeFileSync(transcript, "");
// Where the editor starts the agent: the workspace unless ACP_AGENT_CWD says otherwise.
const agent = spawn(agentBin, agentArgs, { stdio: ["pipe", "pipe", "inherit"], cwd: process.env.ACP_AGENT_CWD ?? workspace });
const exited = new Promise((resolve) => agent.on("exit", (code, signal) => resolve({ code, signal })));

// Records whole lines as they pass, in each direction.
function recorder(from, onLine = () => {}) {
  let pending = "";
  const decoder = new TextDecoder();
  return (bytes) => {
    pending += decoder.decode(bytes, { stream: true });
    let i;
    while ((i = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, i);
      pending = pending.slice(i + 1);
      if (line.trim() === "") continue;
      appendFileSync(transcript, JSON.stringify({ from, line }) + "\n");
      onLine(line);
    }
  };
}
// Waiters for a message the client sends: each a test of the message and what to resolve.
let clientWaiters = [];
const fromAgent = recorder("agent");
const fromClient = recorder("client", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  clientWaiters = clientWaiters.filter(({ test, resolve }) => !(test(msg) && (resolve(), true)));
});
// Resolves once the client has written a message that passes `test`.
function sentByClient(test) {
  return new Promise((resolve) => clientWaiters.push({ test, resolve }));
}
// The SDK may cancel its side of the stream when the connection closes: from then on what
// arrives is still recorded, and not enqueued.
let open = true;
const input = new ReadableStream({
  start(controller) {
    agent.stdout.on("data", (chunk) => {
      const bytes = new Uint8Array(chunk);
      fromAgent(bytes);
      if (open) controller.enqueue(bytes);
    });
    agent.stdout.on("end", () => {
      if (open) controller.close();
      open = false;
    });
  },
  cancel() {
    open = false;
  },
});
const output = new WritableStream({
  write(bytes) {
    fromClient(bytes);
    return new Promise((resolve, reject) => agent.stdin.write(bytes, (e) => (e ? reject(e) : resolve())));
  },
  close() {
    agent.stdin.end();
  },
});

const scenario = process.env.ACP_SCENARIO ?? "approvals";
const seen = { updates: [], permissions: [], fs: [] };
let answer = process.env.ACP_ANSWER ?? "allow_once";
// Permission requests held unanswered (ACP_ANSWER=never), each the function that answers it.
const held = [];
let watch = () => {};
// The editor's buffers (fs scenario), by absolute path.
const buffers = new Map([[join(workspace, "notes.txt"), process.env.ACP_NOTES ?? "unsaved line\n"]]);
// The connection's context, for what a handler sends of its own accord.
let conn;
// A session to cancel before answering the next permission request (scenario `two`).
let cancelFirst = null;
// Called with each permission request as it arrives.
let permissionAsked = () => {};
const app = acp
  .client({ name: "agent-min-acp-test" })
  .onRequest("session/request_permission", async ({ params }) => {
    seen.permissions.push(params);
    permissionAsked(params);
    if (cancelFirst !== null) {
      await conn.notify("session/cancel", { sessionId: cancelFirst });
      cancelFirst = null;
    }
    if (answer === "never") {
      await new Promise((resolve) => held.push(resolve));
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  })
  .onRequest("fs/read_text_file", async ({ params }) => {
    seen.fs.push({ method: "read", path: params.path });
    return { content: buffers.get(params.path) ?? readFileSync(params.path, "utf8") };
  })
  .onRequest("fs/write_text_file", async ({ params }) => {
    seen.fs.push({ method: "write", path: params.path, content: params.content });
    buffers.set(params.path, params.content);
    return {};
  })
  .onNotification("session/update", async ({ params }) => {
    seen.updates.push(params);
    watch(params);
  });

await app.connectWith(acp.ndJsonStream(output, input), async (ctx) => {
  conn = ctx;
  const fs = process.env.ACP_FS === "1";
  seen.initialize = await ctx.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: fs, writeTextFile: fs }, terminal: false },
    clientInfo: { name: "agent-min-acp-test", version: "1.0.0" },
  });
  let session;
  if (scenario === "two") {
    const text = (t) => [{ type: "text", text: t }];
    const a = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
    const b = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
    seen.sessions = [a, b];
    answer = "allow_once";
    cancelFirst = b.sessionId;
    seen.first = await ctx.request("session/prompt", { sessionId: a.sessionId, prompt: text("Write hello.txt.") });
    seen.second = await ctx.request("session/prompt", { sessionId: b.sessionId, prompt: text("Say done.") });
    return;
  }
  if (scenario === "prompts") {
    session = await ctx.request("session/new", { cwd: workspace, mcpServers: JSON.parse(process.env.ACP_MCP ?? "[]") });
    seen.answers = [];
    for (const p of JSON.parse(process.env.ACP_PROMPTS)) {
      const blocks = typeof p === "string" ? [{ type: "text", text: p }] : p;
      seen.answers.push(await ctx.request("session/prompt", { sessionId: session.sessionId, prompt: blocks }));
      // What was held is answered now, and the answers are on the wire before the next prompt.
      const answered = held.splice(0).map((answerIt) => {
        const written = sentByClient((m) => m.id !== undefined && m.method === undefined);
        answerIt();
        return written;
      });
      await Promise.all(answered);
    }
    return;
  }
  if (scenario === "close") {
    const text = (t) => [{ type: "text", text: t }];
    session = await ctx.request("session/new", { cwd: workspace, mcpServers: JSON.parse(process.env.ACP_MCP ?? "[]") });
    seen.session = session;
    const sessionId = session.sessionId;
    const asked = new Promise((resolve) => (permissionAsked = resolve));
    const first = ctx.request("session/prompt", { sessionId, prompt: text(process.env.ACP_PROMPT) });
    await asked;
    const pid = Number(readFileSync(process.env.ACP_PIDFILE, "utf8").trim().split("\n")[0]);
    seen.mcpAliveBeforeClose = alive(pid);
    seen.closed = await ctx.request("session/close", { sessionId });
    // The close is answered once the session is dropped: its server is gone by then.
    seen.mcpAliveAfterClose = alive(pid);
    seen.first = await first;
    // The held request is answered now (the agent no longer waits for it), on the wire before
    // the next request.
    await Promise.all(
      held.splice(0).map((answerIt) => {
        const written = sentByClient((m) => m.id !== undefined && m.method === undefined);
        answerIt();
        return written;
      }),
    );
    seen.afterClose = await ctx
      .request("session/prompt", { sessionId, prompt: text("Are you still there?") })
      .then((result) => ({ result }), (e) => ({ code: e.code, data: e.data }));
    seen.loaded = await ctx.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    seen.reloaded = await ctx.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    seen.second = await ctx.request("session/prompt", { sessionId, prompt: text(process.env.ACP_PROMPT2) });
    return;
  }
  if (scenario === "cancel-when") {
    session = await ctx.request("session/new", { cwd: workspace, mcpServers: JSON.parse(process.env.ACP_MCP ?? "[]") });
    const running = new Promise((resolve) => {
      watch = (p) => {
        if (p.update.sessionUpdate === "tool_call_update" && p.update.status === "in_progress") resolve();
      };
    });
    const first = ctx.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text: process.env.ACP_PROMPT }] });
    await running;
    watch = () => {};
    await fileExists(process.env.ACP_MARKER);
    await ctx.notify("session/cancel", { sessionId: session.sessionId });
    // The next prompt right after the cancel, before the cancelled one is answered.
    const second = process.env.ACP_PROMPT2
      ? ctx.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text: process.env.ACP_PROMPT2 }] })
      : null;
    seen.first = await first;
    if (second) seen.second = await second;
    return;
  }
  if (scenario === "load") {
    session = { sessionId: process.env.ACP_LOAD_ID };
    seen.loaded = await ctx.request("session/load", { sessionId: session.sessionId, cwd: workspace, mcpServers: [] });
  } else {
    session = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
  }
  seen.session = session;
  const prompt = (text) => ctx.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text }] });
  if (scenario === "interrupt") {
    let said = "";
    const streamed = new Promise((resolve) => {
      watch = (p) => {
        if (p.update.sessionUpdate === "agent_message_chunk") said += p.update.content.text ?? "";
        if (p.update.sessionUpdate === "tool_call") said += p.update.title;
        if (said.includes(process.env.ACP_WAIT_FOR)) resolve();
      };
    });
    const first = prompt(process.env.ACP_PROMPT);
    await streamed;
    watch = () => {};
    await ctx.notify("session/cancel", { sessionId: session.sessionId });
    seen.first = await first;
    if (process.env.ACP_MCP_AFTER) {
      // The second prompt in a new session, with these mcpServers.
      const next = await ctx.request("session/new", { cwd: workspace, mcpServers: JSON.parse(process.env.ACP_MCP_AFTER) });
      const blocks = [{ type: "text", text: process.env.ACP_PROMPT2 }];
      seen.second = await ctx.request("session/prompt", { sessionId: next.sessionId, prompt: blocks });
      return;
    }
    seen.second = await prompt(process.env.ACP_PROMPT2);
    return;
  }
  if (scenario === "once" || scenario === "load") {
    seen.first = await prompt(process.env.ACP_PROMPT);
    seen.buffers = Object.fromEntries(buffers);
    return;
  }

  answer = "allow_once";
  seen.first = await prompt("Write hello.txt saying hello.");

  answer = "reject_once";
  seen.second = await prompt("Now write other.txt.");

  answer = "allow_once";
  // Cancelled once the command has been approved...
  const running = new Promise((resolve) => {
    watch = (p) => {
      if (p.update.sessionUpdate === "tool_call_update" && p.update.status === "in_progress") resolve();
    };
  });
  // ...and has begun: it writes started.txt first (a file event, not a timer).
  const started = fileExists(join(workspace, "started.txt"));
  const third = prompt("Run the slow command.");
  await running;
  await started;
  await ctx.notify("session/cancel", { sessionId: session.sessionId });
  seen.third = await third;
});

agent.stdin.end();
seen.exit = await exited;

// Whether process `pid` exists (signal 0 checks without sending anything).
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Resolves once `marker` exists (a file event, not a timer).
function fileExists(marker) {
  return new Promise((resolve) => {
    const w = watchDir(dirname(marker), () => {
      if (existsSync(marker)) {
        w.close();
        resolve();
      }
    });
    if (existsSync(marker)) {
      w.close();
      resolve();
    }
  });
}
process.stdout.write(JSON.stringify(seen) + "\n");
