// The VS Code extension: starts `cudalint server` for Nix documents through
// vscode-languageclient, with a restart command and an output channel.

import * as vscode from "vscode";
import {
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

import {
  DOCUMENT_SELECTOR,
  SECTION,
  type ServerCommand,
  answersForServer,
  lintSettings,
  needsRestart,
  serverCommand,
  startFailureMessage,
  tracesProtocol,
} from "./settings";

const CLIENT_ID = "cudalint";
const CLIENT_NAME = "cudalint";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel | undefined;
let traceOutput: TraceChannel | undefined;

/** The protocol trace, in an output channel of its own ("cudalint (trace)", created on the
 * first message). vscode-languageclient traces only while its trace channel's log level is
 * Trace, and a log channel's level is the user's (Developer: Set Log Level), so this channel's
 * level follows `cudalint.trace.server` instead. */
class TraceChannel implements vscode.LogOutputChannel {
  readonly name = `${CLIENT_NAME} (trace)`;
  private channel: vscode.OutputChannel | undefined;
  private readonly levelChanged = new vscode.EventEmitter<vscode.LogLevel>();
  readonly onDidChangeLogLevel = this.levelChanged.event;
  logLevel = TraceChannel.wanted();

  private static wanted(): vscode.LogLevel {
    return tracesProtocol(readSettings()) ? vscode.LogLevel.Trace : vscode.LogLevel.Off;
  }

  /** Follow a change of `cudalint.trace.server` (the client re-reads it on the event). */
  update(): void {
    const level = TraceChannel.wanted();
    if (level !== this.logLevel) {
      this.logLevel = level;
      this.levelChanged.fire(level);
    }
  }

  private get out(): vscode.OutputChannel {
    this.channel ??= vscode.window.createOutputChannel(this.name);
    return this.channel;
  }

  // The client writes only trace(); every level goes to the channel as it is.
  readonly trace = (message: string): void => this.out.appendLine(message);
  readonly debug = this.trace;
  readonly info = this.trace;
  readonly warn = this.trace;
  readonly error = (error: string | Error): void => this.trace(String(error));
  append(value: string): void {
    this.out.append(value);
  }
  appendLine(value: string): void {
    this.out.appendLine(value);
  }
  replace(value: string): void {
    this.out.replace(value);
  }
  clear(): void {
    this.channel?.clear();
  }
  show(columnOrPreserveFocus?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    this.out.show(typeof columnOrPreserveFocus === "boolean" ? columnOrPreserveFocus : preserveFocus);
  }
  hide(): void {
    this.channel?.hide();
  }
  dispose(): void {
    this.levelChanged.dispose();
    this.channel?.dispose();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel(CLIENT_NAME, { log: true });
  traceOutput = new TraceChannel();
  context.subscriptions.push(
    output,
    traceOutput,
    vscode.commands.registerCommand("cudalint.restartServer", restart),
    vscode.commands.registerCommand("cudalint.showOutput", () => output?.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${SECTION}.trace`)) {
        traceOutput?.update();
      }
      if (needsRestart((section) => event.affectsConfiguration(section))) {
        void restart();
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

/** The running client, if any (for the tests and for other extensions). */
export function languageClient(): LanguageClient | undefined {
  return client;
}

function readSettings(scope?: vscode.Uri): (key: string) => unknown {
  const configuration = vscode.workspace.getConfiguration(SECTION, scope);
  return (key) => configuration.get(key);
}

export function createClient(server: ServerCommand, channel: vscode.LogOutputChannel, trace: vscode.LogOutputChannel): LanguageClient {
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    transport: TransportKind.stdio,
    options: cwd === undefined ? {} : { cwd },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: channel,
    traceOutputChannel: trace,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: lintSettings(readSettings()),
    // Tell the server when settings change; it then asks for them (workspace/configuration).
    synchronize: { configurationSection: SECTION },
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          return Array.isArray(answers) ? answersForServer(params.items, answers) : answers;
        },
      },
    },
  };
  return new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
}

async function start(): Promise<void> {
  if (output === undefined || traceOutput === undefined) {
    return;
  }
  const server = serverCommand(readSettings(), vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  output.info(`Starting ${[server.command, ...server.args].join(" ")}`);
  const starting = createClient(server, output, traceOutput);
  try {
    await starting.start();
    client = starting;
  } catch (error) {
    const message = startFailureMessage(server, error);
    output.error(message);
    // The failed client may still hold a half-started process: stop it quietly.
    await starting.dispose().catch(() => undefined);
    void vscode.window.showErrorMessage(message, "Open Settings", "Show Output").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.server.path`);
      } else if (choice === "Show Output") {
        output?.show(true);
      }
    });
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running !== undefined) {
    await running.stop().catch((error: unknown) => output?.error(`Stopping the server failed: ${String(error)}`));
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}
