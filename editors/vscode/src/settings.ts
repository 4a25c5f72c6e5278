// The extension's settings and what the language client is started with. Nothing here imports
// `vscode`, so the tests run it under plain node.

export const SECTION = "cudalint";

// Nix documents on disk and unsaved ones. Other Nix extensions (nix-ide with nil or nixd) attach
// to the same documents; their diagnostics and cudalint's are shown side by side.
export const DOCUMENT_SELECTOR = [
  { scheme: "file", language: "nix" },
  { scheme: "untitled", language: "nix" },
];

// The editor settings the server reads (section `cudalint` of `workspace/configuration`), in
// the camelCase the server accepts for the config file's keys. `server.*` and `trace.*` are the
// extension's own and never reach the server, which would reject them as unknown keys.
export const LINT_KEYS = ["nixpkgs", "select", "ignore", "extendSelect", "unsafeFixes", "cuda", "preview"] as const;

export type LintKey = (typeof LINT_KEYS)[number];
export type LintSettings = Partial<Record<LintKey, unknown>>;

export interface ServerCommand {
  command: string;
  args: string[];
}

/** Reads one setting of the `cudalint` section (`WorkspaceConfiguration.get` in VS Code). */
export type SettingReader = (key: string) => unknown;

export const DEFAULT_SERVER: ServerCommand = { command: "cudalint", args: ["server"] };

// cudalint is not on PyPI: it installs from its repository (or a wheel built from it).
export const INSTALL_COMMANDS = [
  "pipx install git+https://github.com/cudalint/cudalint",
  "nix profile install github:cudalint/cudalint",
];

/** Whether `cudalint.trace.server` asks for the protocol to be logged ("messages", "verbose"). */
export function tracesProtocol(read: SettingReader): boolean {
  const level = read("trace.server");
  return level === "messages" || level === "verbose";
}

/** The settings the server gets: the lint keys that are set (unset ones are left to the
 * project's cudalint.toml). */
export function lintSettings(read: SettingReader): LintSettings {
  const settings: LintSettings = {};
  for (const key of LINT_KEYS) {
    const value = read(key);
    if (value !== undefined && value !== null) {
      settings[key] = value;
    }
  }
  return settings;
}

/** How to start the server: `cudalint.server.path` with `cudalint.server.args`, where
 * `${workspaceFolder}` stands for the first workspace folder. */
export function serverCommand(read: SettingReader, workspaceFolder?: string): ServerCommand {
  const expand = (text: string) =>
    workspaceFolder === undefined ? text : text.split("${workspaceFolder}").join(workspaceFolder);
  const path = read("server.path");
  const args = read("server.args");
  return {
    command: typeof path === "string" && path.trim() !== "" ? expand(path.trim()) : DEFAULT_SERVER.command,
    args: Array.isArray(args) && args.every((arg) => typeof arg === "string") ? args.map(expand) : [...DEFAULT_SERVER.args],
  };
}

/** Whether a change of configuration needs a new server process (the lint keys do not: the
 * server re-reads them on `workspace/didChangeConfiguration`). */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return affects(`${SECTION}.server`);
}

/** What the user reads when the server cannot be started. */
export function startFailureMessage(server: ServerCommand, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  const invocation = [server.command, ...server.args].join(" ");
  return (
    `cudalint: could not start the language server (\`${invocation}\`): ${reason}. ` +
    `Install cudalint (\`${INSTALL_COMMANDS.join("` or `")}\`) or point ` +
    `\`cudalint.server.path\` at the executable.`
  );
}

/** The answers to a `workspace/configuration` request as the server gets them: VS Code answers
 * the `cudalint` section with every setting of the extension, and the server sees only its own. */
export function answersForServer(items: ReadonlyArray<{ section?: string }>, answers: unknown[]): unknown[] {
  return answers.map((answer, index) => {
    if (items[index]?.section !== SECTION || answer === null || typeof answer !== "object") {
      return answer;
    }
    const section = answer as Record<string, unknown>;
    return lintSettings((key) => section[key]);
  });
}
