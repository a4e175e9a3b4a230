// The real pi runtime in-process (pi's SDK) with pi-ai's faux provider as the model, pi-cgc loaded from
// src/index.ts through pi's own extension loader. A recording UI stands in for the terminal: it keeps
// every notice and status and answers confirmations as the test says.
//
// With PI_CGC_TEST_PI=1 the session is built with pi 1.x instead (@earendil-works/pi-coding-agent and pi-ai,
// installed by scripts/setup.mjs into .cache/compat; run under its Node 22: `npm run test:pi1`). pi 1.x maps
// the import name "@mariozechner/pi-coding-agent" to itself for extensions, so src/ loads unchanged; the
// suites see the same harness either way.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Context, type FauxProviderRegistration, registerFauxProvider } from "@mariozechner/pi-ai";
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
import { EXTENSION_ENTRY, PROJECT_ROOT } from "./cgc-env.ts";

/** pi-cgc as pi loads it (the manifest's entry). */
export const EXTENSION_PATH = EXTENSION_ENTRY;

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

/** The pi line the harness builds sessions with: 1.x when PI_CGC_TEST_PI=1, else the 0.73 of devDependencies. */
export const PI_LINE: "0.73" | "1.x" = process.env.PI_CGC_TEST_PI === "1" ? "1.x" : "0.73";

/** pi-cgc alone (or the extensions given) from the working directory; nothing else of the machine's. */
function loaderOptions<S>(options: PiHarnessOptions, agentDir: string, settingsManager: S) {
  return {
    cwd: options.cwd,
    agentDir,
    settingsManager,
    additionalExtensionPaths: options.extensionPaths ?? [EXTENSION_PATH],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  };
}

export async function startPi(options: PiHarnessOptions): Promise<PiHarness> {
  return PI_LINE === "1.x" ? startPi1(options) : startPi073(options);
}

function harness(
  session: AgentSession,
  faux: FauxProviderRegistration,
  options: PiHarnessOptions,
  agentDir: string,
): PiHarness {
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

async function startPi073(options: PiHarnessOptions): Promise<PiHarness> {
  const faux = registerFauxProvider();
  const model = faux.getModel();
  const authStorage = AuthStorage.inMemory();
  authStorage.setRuntimeApiKey(model.provider, "test");
  const agentDir = options.agentDir ?? mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
  const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
  const resourceLoader = new DefaultResourceLoader(loaderOptions(options, agentDir, settingsManager));
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
  return harness(session, faux, options, agentDir);
}

const COMPAT_MODULES = join(PROJECT_ROOT, ".cache", "compat", "node_modules");

/** A pi 1.x package's entry, imported by absolute path (it is not a dependency of this project). */
async function importCompat(name: string): Promise<Record<string, unknown>> {
  const entry = join(COMPAT_MODULES, ...name.split("/"), "dist", "index.js");
  return (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
}

// The few members of pi 1.x's SDK the harness uses, typed here because its types are not installed for tsc.
interface Pi1Ai {
  fauxProvider(): Omit<FauxProviderRegistration, "unregister"> & { provider: { id: string } };
  InMemoryCredentialStore: new () => unknown;
  getCurrentSystemPrompt(messages: readonly { role: string }[]): string;
  getCurrentTools(messages: readonly { role: string }[]): Context["tools"];
}

type FauxStep = Parameters<FauxProviderRegistration["setResponses"]>[0][number];

/**
 * pi 1.x hands a provider a transcript whose system messages carry the prompt and the tools (the leading one,
 * then mid-conversation updates of changed sections). A suite's response factory reads 0.73's Context: here it
 * gets the same request as that Context, the system prompt and tools in effect after replaying every update.
 */
function asContextStep(step: FauxStep, ai: Pi1Ai): FauxStep {
  if (typeof step !== "function") return step;
  return (context, ...rest) => {
    const messages = context.messages as Array<{ role: string }>;
    const legacy: Context = {
      systemPrompt: ai.getCurrentSystemPrompt(messages),
      messages: context.messages.filter((message) => (message as { role: string }).role !== "system"),
      tools: ai.getCurrentTools(messages),
    };
    return step(legacy, ...rest);
  };
}
interface Pi1ModelRuntime {
  registerNativeProvider(provider: unknown): void;
  unregisterProvider(providerId: string): void;
  setRuntimeApiKey(providerId: string, apiKey: string): Promise<void>;
}
interface Pi1CodingAgent {
  ModelRuntime: { create(options: Record<string, unknown>): Promise<Pi1ModelRuntime> };
  SettingsManager: typeof SettingsManager;
  SessionManager: typeof SessionManager;
  DefaultResourceLoader: typeof DefaultResourceLoader;
  createAgentSession(options: Record<string, unknown>): Promise<{ session: AgentSession }>;
}

async function startPi1(options: PiHarnessOptions): Promise<PiHarness> {
  const ai = (await importCompat("@earendil-works/pi-ai")) as unknown as Pi1Ai;
  const pi = (await importCompat("@earendil-works/pi-coding-agent")) as unknown as Pi1CodingAgent;
  // pi 1.x has no global provider registry for sessions: the faux provider joins this session's model runtime,
  // whose credentials live in memory and which reads no models.json and no network catalog.
  const handle = ai.fauxProvider();
  const model = handle.getModel();
  const agentDir = options.agentDir ?? mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
  const modelRuntime = await pi.ModelRuntime.create({
    credentials: new ai.InMemoryCredentialStore(),
    modelsPath: null,
    allowModelNetwork: false,
    refreshOnCreate: false,
  });
  modelRuntime.registerNativeProvider(handle.provider);
  await modelRuntime.setRuntimeApiKey(handle.provider.id, "test");
  const faux: FauxProviderRegistration = {
    ...handle,
    setResponses: (steps) => handle.setResponses(steps.map((step) => asContextStep(step, ai))),
    appendResponses: (steps) => handle.appendResponses(steps.map((step) => asContextStep(step, ai))),
    unregister: () => modelRuntime.unregisterProvider(handle.provider.id),
  };
  const settingsManager = pi.SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
  const resourceLoader = new pi.DefaultResourceLoader(loaderOptions(options, agentDir, settingsManager));
  await resourceLoader.reload();
  const errors = resourceLoader.getExtensions().errors;
  if (errors.length > 0) throw new Error(`extension load failed: ${JSON.stringify(errors)}`);
  const { session } = await pi.createAgentSession({
    cwd: options.cwd,
    agentDir,
    model,
    modelRuntime,
    settingsManager,
    resourceLoader,
    sessionManager: pi.SessionManager.inMemory(options.cwd),
  });
  await session.bindExtensions({ uiContext: options.ui?.context });
  return harness(session, faux, options, agentDir);
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
