/**
 * The Settings Editor's "GNS3 Copilot" entry (`schema/sidebar.json`) applied to the server:
 * a change PUTs the changed model fields to `copilot/llm-config`. The API key is not a
 * setting (JupyterLab would write it to the settings file in plain text): it has its own
 * dialog (`api-key.ts`). The default mode is the sidebar's own.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import type { CopilotApi, LLMConfigUpdate } from '../api';

export const SETTINGS_PLUGIN_ID = 'jupyter-gns3-copilot:sidebar';

/** The model fields of the settings, as the server names them (empty = the admin's). */
export type ModelFields = Required<
  Pick<LLMConfigUpdate, 'provider' | 'base_url' | 'model' | 'temperature'>
>;

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

/** What to PUT after the settings went from `before` to `after`; null when nothing changed. */
export function llmUpdate(before: ModelFields, after: ModelFields): LLMConfigUpdate | null {
  const update: LLMConfigUpdate = {};
  for (const name of Object.keys(after) as (keyof ModelFields)[]) {
    if (before[name] !== after[name]) {
      Object.assign(update, { [name]: after[name] });
    }
  }
  return Object.keys(update).length ? update : null;
}

/** What `followSettings` tells the sidebar. */
export interface SettingsListener {
  /** The default mode, now and on each change. */
  onMode(mode: string | null): void;
  /** The server took changed model fields (the status now names the new model). */
  onSaved(): void;
  /** The server refused them. */
  onError(message: string): void;
}

/**
 * Follow the plugin's settings: the default mode goes to `listener.onMode` now and on
 * each change; changed model fields go to the server, then `onSaved` (or `onError` with
 * the refusal). Loading the settings sends nothing.
 */
export async function followSettings(
  registry: ISettingRegistry,
  api: CopilotApi,
  listener: SettingsListener
): Promise<void> {
  const settings = await registry.load(SETTINGS_PLUGIN_ID);
  let applied = modelFields(settings.composite as Record<string, unknown>);
  const apply = async () => {
    const composite = settings.composite as Record<string, unknown>;
    listener.onMode(text(composite.defaultMode));
    const current = modelFields(composite);
    const update = llmUpdate(applied, current);
    applied = current;
    if (!update) {
      return;
    }
    try {
      await api.saveLLMConfig(update);
    } catch (error) {
      listener.onError(
        `Your copilot model settings were not saved: ${error instanceof Error ? error.message : String(error)}`
      );
      return;
    }
    listener.onSaved();
  };
  settings.changed.connect(() => void apply());
  await apply();
}
