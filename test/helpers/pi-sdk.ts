// The real pi runtime in-process (pi's SDK) with pi-ai's faux provider as the model, pi-cgc loaded from
// src/index.ts through pi's own extension loader. A recording UI stands in for the terminal: it keeps
// every notice and status and answers confirmations as the test says.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FauxProviderRegistration, registerFauxProvider } from "@mariozechner/pi-ai";
import {
  type AgentSession,
  AuthStorage,
  createAgentSession,
  DefaultResourceLoader,
  type ExtensionUIContext,
  ModelRegistry,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { PROJECT_ROOT } from "./cgc-env.ts";

export const EXTENSION_PATH = join(PROJECT_ROOT, "src", "index.ts");

export interface RecordingUi {
  notices: Array<{ message: string; level: string }>;
  statuses: Map<string, string | undefined>;
  /** Every status text set, in order. */
  statusHistory: Array<string | undefined>;
  confirms: Array<{ title: string; message: string }>;
  /** The answer to the next confirmations (default: decline). */
  confirmAnswer: boolean;
  context: ExtensionUIContext;
}

export function recordingUi(): RecordingUi {
  const ui: RecordingUi = {
    notices: [],
    statuses: new Map(),
    statusHistory: [],
    confirms: [],
    confirmAnswer: false,
    context: undefined as unknown as ExtensionUIContext,
  };
  const known: Partial<ExtensionUIContext> = {
    notify: (message, level) => {
      ui.notices.push({ message, level: level ?? "info" });
    },
    setStatus: (key, text) => {
      ui.statuses.set(key, text);
      ui.statusHistory.push(text);
    },
    confirm: async (title, message) => {
      ui.confirms.push({ title, message });
      return ui.confirmAnswer;
    },
    select: async () => undefined,
    input: async () => undefined,
    editor: async () => undefined,
    custom: (async () => undefined) as ExtensionUIContext["custom"],
    getEditorText: () => "",
  };
  // Everything else a mode offers is a no-op here, as in pi's own headless UI.
  ui.context = new Proxy(known as ExtensionUIContext, {
    get: (target, property) => (property in target ? target[property as keyof ExtensionUIContext] : () => undefined),
  });
  return ui;
}

export interface PiHarness {
  session: AgentSession;
  faux: FauxProviderRegistration;
  ui: RecordingUi | undefined;
  cwd: string;
  agentDir: string;
  dispose(): Promise<void>;
}

export interface PiHarnessOptions {
  cwd: string;
  /** A recording UI (interactive-like); omit for pi's headless (print/json-like) mode. */
  ui?: RecordingUi;
  agentDir?: string;
  extensionPaths?: string[];
}

export async function startPi(options: PiHarnessOptions): Promise<PiHarness> {
  const faux = registerFauxProvider();
  const model = faux.getModel();
  const authStorage = AuthStorage.inMemory();
  authStorage.setRuntimeApiKey(model.provider, "test");
  const agentDir = options.agentDir ?? mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
  const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
  const resourceLoader = new DefaultResourceLoader({
    cwd: options.cwd,
    agentDir,
    settingsManager,
    additionalExtensionPaths: options.extensionPaths ?? [EXTENSION_PATH],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  await resourceLoader.reload();
  const errors = resourceLoader.getExtensions().errors;
  if (errors.length > 0) throw new Error(`extension load failed: ${JSON.stringify(errors)}`);
  const { session } = await createAgentSession({
    cwd: options.cwd,
    agentDir,
    model,
    authStorage,
    modelRegistry: ModelRegistry.inMemory(authStorage),
    settingsManager,
    resourceLoader,
    sessionManager: SessionManager.inMemory(options.cwd),
  });
  await session.bindExtensions({ uiContext: options.ui?.context });
  return {
    session,
    faux,
    ui: options.ui,
    cwd: options.cwd,
    agentDir,
    async dispose() {
      // pi's CLI runtime emits session_shutdown on quit; the bare SDK session leaves that to its owner.
      await session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
      session.dispose();
      faux.unregister();
    },
  };
}

/** The suites' one poll (test/helpers/poll.ts), here too because most suites import it with the harness. */
export { waitFor } from "./poll.ts";

/** The tool results in the session from message `from` on: the tool's name, its text, and whether it is an error. */
export function toolResults(h: PiHarness, from = 0): Array<{ name: string; text: string; isError: boolean }> {
  return h.session.messages.slice(from).flatMap((message) =>
    message.role === "toolResult"
      ? [
          {
            name: message.toolName,
            text: message.content.map((part) => (part.type === "text" ? part.text : "")).join(""),
            isError: message.isError,
          },
        ]
      : [],
  );
}

/** `/cgc status` as the user reads it: the text of the notices the command adds. */
export async function cgcStatus(h: PiHarness): Promise<string> {
  const ui = h.ui;
  if (!ui) throw new Error("cgcStatus needs a recording UI");
  const before = ui.notices.length;
  await h.session.prompt("/cgc status");
  return ui.notices
    .slice(before)
    .map((notice) => notice.message)
    .join("\n");
}
