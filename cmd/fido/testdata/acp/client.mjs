// ACP test client: the TypeScript SDK's client side (@agentclientprotocol/sdk,
// stable v1 entrypoint) driving an agent through a JSON script, so Fido's
// tests exercise `fido acp` with a real client nobody here wrote.
//
//   FIDO_ACP_SDK=/opt/fido-tools/npm-acp node client.mjs SCRIPT.json -- AGENT [ARGS...]
//
// FIDO_ACP_SDK is the npm prefix the SDK was installed into (the directory
// holding node_modules/@agentclientprotocol/sdk). The agent runs as a child
// process speaking newline-delimited JSON-RPC on its stdin/stdout; its stderr
// passes through to ours.
//
// The script (all fields optional):
//   {
//     "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": false},
//     "protocolVersion": 1,
//     "root": "/abs/workspace",        // fs/* outside it are refused (-32602)
//     "files": {"/abs/path": "text"},  // fs buffers: read from here first, then disk
//     "permissions": [ANSWER, ...],    // consumed in order, one per session/request_permission
//     "steps": [STEP, ...],
//     "timeoutMs": 60000,              // the whole run
//     "wire": false                    // also write every JSON-RPC message
//   }
// ANSWER: {"kind": "allow_once"} picks the first option of that kind;
//   {"optionId": "x"} picks that option; {"cancel": true} sends session/cancel
//   for the session, then answers the request "cancelled" as the protocol
//   requires; {"hold": true} never answers (the agent must give up on its own,
//   e.g. after a session/cancel step). With no answer left the request is
//   answered "cancelled" and an "unexpected_permission" event is written.
// STEP: {"op": "initialize"} (run first when absent), {"op": "new", "cwd",
//   "mcpServers"}, {"op": "prompt", "prompt": "text" | [ContentBlock...],
//   "noWait": true}, {"op": "cancel"}, {"op": "load", "sessionId"?, "cwd"?},
//   {"op": "list"}, {"op": "resume", "sessionId"?}, {"op": "close",
//   "sessionId"?}, {"op": "setMode", "modeId"}, {"op": "setConfig",
//   "configId", "value"}, {"op": "waitPrompts"} (waits for noWait prompts),
//   {"op": "request", "method", "params"} (any other method, raw).
//   "sessionId" defaults to the last session created, loaded or resumed;
//   "cwd" to the script's root. A step whose request fails writes an "error"
//   event and the run goes on, unless it has "mustSucceed": true.
//
// Every event is one JSON object on its own stdout line, in the order it
// happened: {"ev":"result"|"error", "op", "result"|"error"}, {"ev":"update",
// "sessionId", "update"}, {"ev":"permission", "params", "answer"},
// {"ev":"fs_read"|"fs_write"|"terminal_*", "params", "error"?},
// {"ev":"sdk_error", "args"} when the SDK refuses a message (it logs that
// and answers a request -32602; an invalid plan entry it drops silently, so
// compare entries, not counts), {"ev":"wire", "dir": "recv"|"send", "msg"}
// for every message when "wire" is set, and finally {"ev":"done", "code"}. The exit code is 0 unless the run failed as a whole
// (bad script, agent died early, timeout, a mustSucceed step failed).

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, relative, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

function emit(ev) {
  process.stdout.write(JSON.stringify(ev) + "\n");
}

function fail(msg) {
  emit({ ev: "fatal", message: msg });
  emit({ ev: "done", code: 2 });
  process.exit(2);
}

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
if (argv.length < 3 || dash !== 1) fail("usage: client.mjs SCRIPT.json -- AGENT [ARGS...]");
const script = JSON.parse(readFileSync(argv[0], "utf8"));
const agentCmd = argv.slice(2);

const sdkPrefix = process.env.FIDO_ACP_SDK;
if (!sdkPrefix) fail("FIDO_ACP_SDK is not set (the npm prefix holding @agentclientprotocol/sdk)");
const sdkPath = createRequire(join(resolve(sdkPrefix), "noop.js")).resolve("@agentclientprotocol/sdk");
const acp = await import(pathToFileURL(sdkPath).href);

const root = script.root ? resolve(script.root) : undefined;
const files = new Map(Object.entries(script.files ?? {}));
const answers = [...(script.permissions ?? [])];
const caps = script.clientCapabilities ?? { fs: { readTextFile: true, writeTextFile: true }, terminal: false };

function inside(p) {
  if (!isAbsolute(p)) return false;
  if (!root) return true;
  const rel = relative(root, resolve(p));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

function refuse(message, data) {
  return new acp.RequestError(-32602, message, data);
}

const child = spawn(agentCmd[0], agentCmd.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
let exited = null;
child.on("exit", (code, signal) => {
  exited = { code, signal };
  emit({ ev: "agent_exit", code, signal });
});
child.on("error", (err) => fail(`cannot start agent: ${err.message}`));

let current; // the session the steps talk to
const promptsInFlight = [];
const terminals = new Map();
let nextTerminal = 0;

const app = acp
  .client({ name: "fido-acp-test-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    emit({ ev: "update", sessionId: params.sessionId, update: params.update });
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params, agent }) => {
    const answer = answers.shift();
    const options = params.options ?? [];
    if (!answer) {
      emit({ ev: "unexpected_permission", params });
      return { outcome: { outcome: "cancelled" } };
    }
    if (answer.hold) {
      emit({ ev: "permission", params, answer });
      return new Promise(() => {});
    }
    if (answer.cancel) {
      emit({ ev: "permission", params, answer });
      await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
      emit({ ev: "sent", op: "cancel", sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    const opt = answer.optionId
      ? options.find((o) => o.optionId === answer.optionId)
      : options.find((o) => o.kind === answer.kind);
    if (!opt) {
      emit({ ev: "permission", params, answer, error: "no such option" });
      return { outcome: { outcome: "cancelled" } };
    }
    emit({ ev: "permission", params, answer, optionId: opt.optionId });
    return { outcome: { outcome: "selected", optionId: opt.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    if (!inside(params.path)) {
      emit({ ev: "fs_read", params, error: "outside the workspace" });
      throw refuse("path outside the workspace", { path: params.path });
    }
    let text = files.get(params.path);
    if (text === undefined) {
      try {
        text = readFileSync(params.path, "utf8");
      } catch (err) {
        emit({ ev: "fs_read", params, error: err.code ?? String(err) });
        throw acp.RequestError.resourceNotFound(params.path);
      }
    }
    if (params.line != null || params.limit != null) {
      const lines = text.split("\n");
      const start = Math.max((params.line ?? 1) - 1, 0);
      const end = params.limit != null ? start + params.limit : lines.length;
      text = lines.slice(start, end).join("\n");
    }
    emit({ ev: "fs_read", params });
    return { content: text };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    if (!inside(params.path)) {
      emit({ ev: "fs_write", params, error: "outside the workspace" });
      throw refuse("path outside the workspace", { path: params.path });
    }
    files.set(params.path, params.content);
    if (script.writeToDisk) writeFileSync(params.path, params.content);
    emit({ ev: "fs_write", params });
    return {};
  })
  .onRequest(acp.methods.client.terminal.create, ({ params }) => {
    const id = `term_${++nextTerminal}`;
    const proc = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? root,
      env: { ...process.env, ...Object.fromEntries((params.env ?? []).map((e) => [e.name, e.value])) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const t = { proc, output: "", exit: null, waiters: [] };
    const add = (b) => {
      t.output += b.toString("utf8");
      const limit = params.outputByteLimit;
      if (limit != null && Buffer.byteLength(t.output) > limit) t.output = t.output.slice(-limit);
    };
    proc.stdout.on("data", add);
    proc.stderr.on("data", add);
    proc.on("close", (code, signal) => {
      t.exit = { exitCode: code, signal };
      t.waiters.splice(0).forEach((w) => w());
    });
    proc.on("error", (err) => {
      t.output += String(err);
      t.exit = { exitCode: 127, signal: null };
      t.waiters.splice(0).forEach((w) => w());
    });
    terminals.set(id, t);
    emit({ ev: "terminal_create", params, terminalId: id });
    return { terminalId: id };
  })
  .onRequest(acp.methods.client.terminal.output, ({ params }) => {
    const t = terminals.get(params.terminalId);
    if (!t) throw acp.RequestError.resourceNotFound(params.terminalId);
    emit({ ev: "terminal_output", params });
    return { output: t.output, truncated: false, exitStatus: t.exit ?? undefined };
  })
  .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
    const t = terminals.get(params.terminalId);
    if (!t) throw acp.RequestError.resourceNotFound(params.terminalId);
    if (!t.exit) await new Promise((r) => t.waiters.push(r));
    emit({ ev: "terminal_wait_for_exit", params, exit: t.exit });
    return t.exit;
  })
  .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
    const t = terminals.get(params.terminalId);
    if (!t) throw acp.RequestError.resourceNotFound(params.terminalId);
    t.proc.kill("SIGTERM");
    emit({ ev: "terminal_kill", params });
    return {};
  })
  .onRequest(acp.methods.client.terminal.release, ({ params }) => {
    const t = terminals.get(params.terminalId);
    if (t && !t.exit) t.proc.kill("SIGKILL");
    terminals.delete(params.terminalId);
    emit({ ev: "terminal_release", params });
    return {};
  })
  .onRequest("*", ({ method, params }) => {
    emit({ ev: "unknown_request", method, params });
    throw acp.RequestError.methodNotFound(method);
  })
  .onNotification("*", ({ method, params }) => {
    emit({ ev: "unknown_notification", method, params });
  });

// The SDK reports the messages it refuses through console.error.
const consoleError = console.error.bind(console);
console.error = (...args) => {
  emit({ ev: "sdk_error", args: args.map((a) => (a instanceof Error ? a.message : a)) });
  consoleError(...args);
};

let stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
if (script.wire) {
  const tap = (dir) =>
    new TransformStream({
      transform(msg, out) {
        emit({ ev: "wire", dir, msg });
        out.enqueue(msg);
      },
    });
  const send = tap("send");
  send.readable.pipeTo(stream.writable).catch(() => {});
  stream = { readable: stream.readable.pipeThrough(tap("recv")), writable: send.writable };
}

const timer = setTimeout(() => fail(`timed out after ${script.timeoutMs ?? 60000} ms`), script.timeoutMs ?? 60000);

function sid(step) {
  return step.sessionId ?? current;
}

async function run(ctx, step) {
  const M = acp.methods.agent;
  switch (step.op) {
    case "initialize":
      return ctx.request(M.initialize, {
        protocolVersion: step.protocolVersion ?? script.protocolVersion ?? acp.PROTOCOL_VERSION,
        clientCapabilities: step.clientCapabilities ?? caps,
        clientInfo: { name: "fido-acp-test-client", version: "1" },
      });
    case "new": {
      const r = await ctx.request(M.session.new, { cwd: step.cwd ?? root, mcpServers: step.mcpServers ?? [] });
      current = r.sessionId;
      return r;
    }
    case "prompt": {
      const prompt = typeof step.prompt === "string" ? [{ type: "text", text: step.prompt }] : step.prompt;
      return ctx.request(M.session.prompt, { sessionId: sid(step), prompt });
    }
    case "cancel":
      await ctx.notify(M.session.cancel, { sessionId: sid(step) });
      return null;
    case "load": {
      const sessionId = sid(step);
      const r = await ctx.request(M.session.load, { sessionId, cwd: step.cwd ?? root, mcpServers: step.mcpServers ?? [] });
      current = sessionId;
      return r;
    }
    case "list":
      return ctx.request(M.session.list, step.cwd ? { cwd: step.cwd } : {});
    case "resume": {
      const sessionId = sid(step);
      const r = await ctx.request(M.session.resume, { sessionId, cwd: step.cwd ?? root, mcpServers: step.mcpServers ?? [] });
      current = sessionId;
      return r;
    }
    case "close":
      return ctx.request(M.session.close, { sessionId: sid(step) });
    case "setMode":
      return ctx.request(M.session.setMode, { sessionId: sid(step), modeId: step.modeId });
    case "setConfig":
      return ctx.request(M.session.setConfigOption, { sessionId: sid(step), configId: step.configId, value: step.value });
    case "request":
      return ctx.request(step.method, step.params ?? {});
    default:
      throw new Error(`unknown op ${step.op}`);
  }
}

let code = 0;
try {
  await app.connectWith(stream, async (ctx) => {
    const steps = script.steps ?? [];
    if (!steps.length || steps[0].op !== "initialize") steps.unshift({ op: "initialize", mustSucceed: true });
    for (const step of steps) {
      if (exited) throw new Error(`agent exited early (${JSON.stringify(exited)})`);
      if (step.op === "waitPrompts") {
        await Promise.allSettled(promptsInFlight.splice(0));
        continue;
      }
      const p = run(ctx, step).then(
        (result) => emit({ ev: "result", op: step.op, result: result ?? null }),
        (err) => {
          emit({ ev: "error", op: step.op, error: { code: err.code, message: err.message, data: err.data } });
          if (step.mustSucceed) throw err;
        },
      );
      if (step.op === "prompt" && step.noWait) promptsInFlight.push(p);
      else await p;
    }
    await Promise.allSettled(promptsInFlight.splice(0));
  });
} catch (err) {
  emit({ ev: "fatal", message: String(err?.message ?? err) });
  code = 1;
}
clearTimeout(timer);
child.stdin.end();
const gone = exited
  ? Promise.resolve()
  : new Promise((r) => {
      child.on("exit", r);
      setTimeout(() => {
        child.kill("SIGTERM");
        r();
      }, 3000).unref();
    });
await gone;
emit({ ev: "done", code });
process.exit(code);
