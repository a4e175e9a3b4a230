// `/cgc config`: pi-tui's settings list over the one key table. Enums and booleans cycle through their
// values, numbers and strings open an input; every value passes the loader's own validator. Keys set by
// an environment variable are read-only and name it. On close the user picks where to save.

import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { getSettingsListTheme } from "@mariozechner/pi-coding-agent";
import { type Component, Container, Input, type SettingItem, SettingsList, Text } from "@mariozechner/pi-tui";
import { CONFIG_KEY_NAMES, CONFIG_KEYS, type ConfigKey } from "../config/keys.ts";
import { describeSource, isConfigKey, type LoadedConfig } from "../config/load.ts";
import { saveConfigValue } from "../config/save.ts";

export const SAVE_PROJECT = "Save to project";
export const SAVE_GLOBAL = "Save to global";
export const DISCARD = "Discard changes";

function formatValue(name: ConfigKey, value: unknown): string {
  return (CONFIG_KEYS[name].type.format as (value: unknown) => string)(value);
}

export function settingItems(loaded: LoadedConfig): SettingItem[] {
  return CONFIG_KEY_NAMES.map((name) => {
    const def = CONFIG_KEYS[name];
    const source = loaded.sources[name];
    const current = formatValue(name, loaded.values[name]);
    if (source.kind === "env") {
      return {
        id: name,
        label: name,
        currentValue: `${current} (env)`,
        description: `${def.doc} Set by ${source.variable}; read-only here — unset the variable to change it.`,
      };
    }
    return {
      id: name,
      label: name,
      currentValue: current,
      description: `${def.doc} Source: ${describeSource(source)}.`,
      ...(def.type.options ? { values: [...def.type.options] } : { submenu: inputSubmenu(name) }),
    };
  });
}

function inputSubmenu(name: ConfigKey) {
  return (currentValue: string, done: (value?: string) => void): Component => {
    const input = new Input();
    input.setValue(currentValue);
    input.onSubmit = (value) => done(value.trim());
    input.onEscape = () => done(undefined);
    const container = new Container();
    container.addChild(new Text(`${name} (${CONFIG_KEYS[name].type.label}) — enter to accept, esc to cancel`));
    container.addChild(input);
    return {
      render: (width: number) => container.render(width),
      invalidate: () => container.invalidate(),
      handleInput: (data: string) => input.handleInput(data),
    };
  };
}

/**
 * Opens the modal; returns the saved path, "none" when nothing was saved, or "no-tui" when the mode
 * cannot show custom components (RPC), so the caller shows the read-only table instead.
 */
export async function openSettings(ctx: ExtensionCommandContext, loaded: LoadedConfig): Promise<string> {
  const pending = new Map<ConfigKey, string>();
  let shown = false;
  await ctx.ui.custom<void>((tui, theme, _keybindings, done) => {
    shown = true;
    const list = new SettingsList(
      settingItems(loaded),
      Math.min(CONFIG_KEY_NAMES.length + 2, 20),
      getSettingsListTheme(),
      (id, value) => {
        if (!isConfigKey(id)) return;
        const parsed = CONFIG_KEYS[id].type.parse(value);
        if (!parsed.ok) {
          ctx.ui.notify(`${id} = ${JSON.stringify(value)} not accepted: ${parsed.error}`, "warning");
          list.updateValue(id, pending.get(id) ?? formatValue(id, loaded.values[id]));
          return;
        }
        pending.set(id, formatValue(id, parsed.value));
      },
      () => done(undefined),
      { enableSearch: true },
    );
    const container = new Container();
    container.addChild(new Text(theme.fg("accent", theme.bold("pi-cgc settings"))));
    container.addChild(list);
    return {
      render: (width: number) => container.render(width),
      invalidate: () => container.invalidate(),
      handleInput: (data: string) => {
        list.handleInput(data);
        tui.requestRender();
      },
    };
  });
  if (!shown) return "no-tui";
  if (pending.size === 0) return "none";
  const summary = [...pending].map(([name, value]) => `${name} = ${value}`).join(", ");
  const choice = await ctx.ui.select(`Save ${summary}?`, [
    `${SAVE_PROJECT} (${loaded.projectPath})`,
    `${SAVE_GLOBAL} (${loaded.globalPath})`,
    DISCARD,
  ]);
  if (!choice || choice === DISCARD) return "none";
  const path = choice.startsWith(SAVE_PROJECT) ? loaded.projectPath : loaded.globalPath;
  for (const [name, value] of pending) {
    const result = await saveConfigValue(path, name, value);
    if (!result.ok) {
      ctx.ui.notify(`Not saved: ${result.error}`, "error");
      return "none";
    }
  }
  return path;
}
