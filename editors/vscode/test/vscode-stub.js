// A stand-in for the `vscode` module (VS Code cannot run here): the parts of the API the
// extension and vscode-languageclient touch, recording what they were asked to do. Anything
// else resolves to a no-op, so the client's feature registrations succeed.
"use strict";

const Module = require("node:module");

class Disposable {
  constructor(callOnDispose = () => undefined) {
    this.callOnDispose = callOnDispose;
  }
  static from(...disposables) {
    return new Disposable(() => disposables.forEach((d) => d?.dispose?.()));
  }
  dispose() {
    this.callOnDispose();
  }
}

class EventEmitter {
  constructor() {
    this.listeners = new Set();
    this.event = (listener) => {
      this.listeners.add(listener);
      return new Disposable(() => this.listeners.delete(listener));
    };
  }
  fire(value) {
    for (const listener of [...this.listeners]) listener(value);
  }
  dispose() {
    this.listeners.clear();
  }
}

// Any property is a function returning a disposable; any call returns another such object.
function anything() {
  const target = function () {};
  return new Proxy(target, {
    get(_, property) {
      if (property === "then") return undefined; // not a promise
      if (property === "dispose") return () => undefined;
      if (property === Symbol.iterator) return function* () {};
      return anything();
    },
    apply() {
      return anything();
    },
    construct() {
      return anything();
    },
  });
}

function withFallback(object) {
  return new Proxy(object, {
    get(target, property) {
      return property in target ? target[property] : anything();
    },
  });
}

/** A fresh stub: `settings` are the `cudalint.*` values; `calls` records what happened. */
function createVscodeStub(settings = {}) {
  const calls = { outputChannels: [], commands: new Map(), errorMessages: [], configurationListeners: [] };
  const uri = (fsPath) => ({ scheme: "file", fsPath, path: fsPath, toString: () => `file://${fsPath}` });
  const stub = {
    version: "1.91.0",
    Disposable,
    EventEmitter,
    LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
    Uri: { file: uri, parse: (text) => uri(text.replace(/^file:\/\//, "")) },
    env: withFallback({ appName: "stub", language: "en", machineId: "stub", sessionId: "stub" }),
    window: withFallback({
      createOutputChannel(name, options) {
        const lines = [];
        const log = (text) => lines.push(String(text));
        const channel = withFallback({
          name,
          options,
          lines,
          append: log,
          appendLine: log,
          info: log,
          warn: log,
          error: log,
          debug: log,
          trace: log,
          show: () => undefined,
          dispose: () => undefined,
          logLevel: 2,
          onDidChangeLogLevel: new EventEmitter().event,
        });
        calls.outputChannels.push(channel);
        return channel;
      },
      showErrorMessage(message) {
        calls.errorMessages.push(message);
        return Promise.resolve(undefined);
      },
      showWarningMessage: () => Promise.resolve(undefined),
      showInformationMessage: () => Promise.resolve(undefined),
      visibleTextEditors: [],
      activeTextEditor: undefined,
    }),
    commands: withFallback({
      registerCommand(name, callback) {
        calls.commands.set(name, callback);
        return new Disposable(() => calls.commands.delete(name));
      },
      executeCommand: () => Promise.resolve(undefined),
    }),
    workspace: withFallback({
      workspaceFolders: undefined,
      textDocuments: [],
      getConfiguration(section) {
        const prefix = section ? `${section}.` : "";
        return withFallback({
          get: (key, fallback) => {
            const value = settings[`${prefix}${key}`.replace(/^cudalint\./, "")];
            return value === undefined ? fallback : value;
          },
          has: (key) => `${prefix}${key}`.replace(/^cudalint\./, "") in settings,
        });
      },
      onDidChangeConfiguration(listener) {
        calls.configurationListeners.push(listener);
        return new Disposable();
      },
    }),
    languages: withFallback({}),
  };
  return { vscode: withFallback(stub), calls };
}

/** Make `require("vscode")` return `stub` from now on (in this process). */
function installVscodeStub(stub) {
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    return request === "vscode" ? "vscode" : resolve.call(this, request, ...rest);
  };
  require.cache.vscode = { id: "vscode", filename: "vscode", loaded: true, exports: stub };
}

function fakeContext() {
  return withFallback({ subscriptions: [], extensionPath: __dirname, asAbsolutePath: (p) => p });
}

module.exports = { createVscodeStub, installVscodeStub, fakeContext };
