// The packaged bundle (dist/extension.js, what the .vsix runs) loaded and activated with
// `vscode` stubbed, the real vscode-languageclient inside it and the real server behind it.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

const { createVscodeStub, installVscodeStub, fakeContext } = require("./vscode-stub");
const { serverPath } = require("./server");
const manifest = require("../package.json");

const BUNDLE = path.resolve(__dirname, "..", manifest.main);

/** A fresh copy of the bundle bound to a fresh stub with these `cudalint.*` settings. */
function loadExtension(settings) {
  const { vscode, calls } = createVscodeStub(settings);
  installVscodeStub(vscode);
  delete require.cache[BUNDLE];
  return { extension: require(BUNDLE), calls };
}

test("the bundle loads with only `vscode` provided and exports activate/deactivate", () => {
  const { extension } = loadExtension({});
  assert.equal(typeof extension.activate, "function");
  assert.equal(typeof extension.deactivate, "function");
});

test("every contributed command is registered on activation", async () => {
  const { extension, calls } = loadExtension({ "server.path": path.join(__dirname, "no-such-cudalint") });
  await extension.activate(fakeContext());
  const contributed = manifest.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual([...calls.commands.keys()].sort(), contributed);
  assert.deepEqual(calls.outputChannels.map((c) => c.name), ["cudalint"]);
  await extension.deactivate();
});

test("a server that cannot be started is reported once, with the install command", async () => {
  const missing = path.join(__dirname, "no-such-cudalint");
  const { extension, calls } = loadExtension({ "server.path": missing });
  await extension.activate(fakeContext());
  const ours = calls.errorMessages.filter((m) => m.startsWith("cudalint: could not start"));
  assert.equal(ours.length, 1, JSON.stringify(calls.errorMessages));
  assert.match(ours[0], new RegExp(`\`${missing} server\``));
  assert.match(ours[0], /pipx install git\+https:\/\/github\.com\/cudalint\/cudalint/);
  assert.equal(extension.languageClient(), undefined);
  assert.ok(calls.outputChannels[0].lines.some((line) => line.includes("could not start")));
  await extension.deactivate();
});

test("activation starts the real server and the restart command replaces it", async () => {
  const { extension, calls } = loadExtension({ "server.path": serverPath, nixpkgs: "25.05" });
  await extension.activate(fakeContext());
  try {
    const first = extension.languageClient();
    assert.ok(first, JSON.stringify(calls.errorMessages));
    assert.ok(first.isRunning());
    assert.equal(first.initializeResult.serverInfo.name, "cudalint");
    assert.ok(first.initializeResult.capabilities.codeActionProvider);

    await calls.commands.get("cudalint.restartServer")();
    const second = extension.languageClient();
    assert.ok(second && second !== first && second.isRunning());
    assert.equal(first.isRunning(), false);
  } finally {
    await extension.deactivate();
  }
  assert.equal(extension.languageClient(), undefined);
  assert.deepEqual(calls.errorMessages, []);
});

/** Start the real server with `trace.server` set, open nothing, stop; the channels it made. */
async function channelsAfterARun(traceServer) {
  const { extension, calls } = loadExtension({ "server.path": serverPath, "trace.server": traceServer });
  await extension.activate(fakeContext());
  try {
    assert.ok(extension.languageClient()?.isRunning(), JSON.stringify(calls.errorMessages));
  } finally {
    await extension.deactivate();
  }
  return new Map(calls.outputChannels.map((channel) => [channel.name, channel]));
}

test("trace.server \"messages\" logs the protocol in the trace channel, whatever the log level", async () => {
  // The stub's log channels are at level Debug: a client tracing into one would log nothing.
  const channels = await channelsAfterARun("messages");
  const trace = channels.get("cudalint (trace)");
  assert.ok(trace, [...channels.keys()].join(", "));
  const text = trace.lines.join("\n");
  assert.match(text, /Sending request 'initialize/);
  assert.match(text, /Received response 'initialize/);
  assert.ok(!channels.get("cudalint").lines.some((line) => line.includes("Sending request")));
});

test("trace.server \"off\" logs no protocol anywhere", async () => {
  const channels = await channelsAfterARun("off");
  assert.deepEqual([...channels.keys()], ["cudalint"]);
  assert.ok(!channels.get("cudalint").lines.some((line) => line.includes("Sending request")));
});
