/**
 * The Settings Editor's "GNS3 Copilot" entry (`schema/sidebar.json`) applied to the server:
 * a change PUTs the changed model fields to `copilot/llm-config`; the API key is sent once
 * and then removed from the settings, so it never stays in the settings file on disk.
 * The default mode is the sidebar's own.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import type { CopilotApi, LLMConfigUpdate } from '../api';

export const SETTINGS_PLUGIN_ID = 'jupyter-gns3-copilot:sidebar';

/** The model fields of the settings, as the server names them (empty = the admin's). */
export interface ModelFields {
  provider: string | null;
  base_url: string | null;
  model: string | null;
  temperature: number | null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

export function modelFields(composite: Record<string, unknown>): ModelFields {
  const temperature = composite.temperature;
  return {
    provider: text(composite.provider),
    base_url: text(composite.baseUrl),
    model: text(composite.model),
    temperature: typeof temperature === 'number' ? temperature : null
  };
}

/**
 * What to PUT after the settings went from `before` to `after` with `apiKey` typed in
 * (a lone space removes the user's key); null when nothing changed.
 */
export function llmUpdate(before: ModelFields, after: ModelFields, apiKey: string): LLMConfigUpdate | null {
  const update: LLMConfigUpdate = {};
  for (const name of Object.keys(after) as (keyof ModelFields)[]) {
    if (before[name] !== after[name]) {
      Object.assign(update, { [name]: after[name] });
    }
  }
  if (apiKey) {
    update.api_key = apiKey.trim() ? apiKey.trim() : null;
  }
  return Object.keys(update).length ? update : null;
}

/** How long the key field must stay unchanged before the key is sent and cleared: the
 * Settings Editor saves while one types, and a half-typed key must not be sent. */
export const KEY_SETTLE_MS = 1500;

/**
 * Follow the plugin's settings: `onMode` gets the default mode now and on each change;
 * changed model fields go to the server at once, a typed key once it has settled
 * (`onError` hears refusals). Loading the settings sends nothing but a key left over
 * from an interrupted save.
 */
export async function followSettings(
  registry: ISettingRegistry,
  api: CopilotApi,
  onMode: (mode: string | null) => void,
  onError: (message: string) => void
): Promise<void> {
  const settings = await registry.load(SETTINGS_PLUGIN_ID);
  let applied = modelFields(settings.composite as Record<string, unknown>);
  let keyTimer: ReturnType<typeof setTimeout> | undefined;
  const save = async (update: LLMConfigUpdate) => {
    try {
      await api.saveLLMConfig(update);
    } catch (error) {
      onError(`Your copilot model settings were not saved: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const sendKey = async (key: string) => {
    try {
      await save(llmUpdate(applied, applied, key) ?? {});
    } finally {
      // Removing it rewrites the settings file without the key (and fires `changed`
      // once more, with nothing left to send).
      await settings.remove('apiKey');
    }
  };
  const apply = async () => {
    const composite = settings.composite as Record<string, unknown>;
    onMode(text(composite.defaultMode));
    const current = modelFields(composite);
    const update = llmUpdate(applied, current, '');
    applied = current;
    const key = typeof composite.apiKey === 'string' ? composite.apiKey : '';
    clearTimeout(keyTimer);
    if (key) {
      keyTimer = setTimeout(() => void sendKey(key), KEY_SETTLE_MS);
    }
    if (update) {
      await save(update);
    }
  };
  settings.changed.connect(() => void apply());
  await apply();
}
