/**
 * The model API key's own way in: the password input of its dialog (shown by
 * `key-dialog.ts`) and what is PUT straight to `copilot/llm-config` (write-only). The key
 * never goes through the Settings Editor, so JupyterLab never writes it into a file.
 */
import type { CopilotApi, LLMConfigView, LLMConfigUpdate } from '../api';

/** What the user chose in the key dialog. */
export type KeyChoice = { action: 'save'; key: string } | { action: 'remove' } | { action: 'cancel' };

/** The dialog's body: a labelled password input the browser neither fills nor remembers. */
export function keyInputNode(): { node: HTMLElement; input: HTMLInputElement } {
  const node = document.createElement('label');
  node.className = 'jp-gns3-copilot-key-dialog';
  node.textContent = 'Your model API key (sent to the Jupyter server once, stored there encrypted):';
  const input = document.createElement('input');
  input.type = 'password';
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.className = 'jp-mod-styled jp-gns3-copilot-key-input';
  node.append(input);
  return { node, input };
}

/** The PUT body for a choice; null (send nothing) for Cancel or an empty key. */
export function keyUpdate(choice: KeyChoice): LLMConfigUpdate | null {
  if (choice.action === 'remove') {
    return { api_key: null };
  }
  if (choice.action === 'save' && choice.key.trim()) {
    return { api_key: choice.key.trim() };
  }
  return null;
}

/**
 * Ask (`ask`: the dialog, told whether the user has a key of their own to remove) and
 * send the key; true when the server took a change, false when nothing was sent. Rejects
 * with the server's refusal (`ApiError`).
 */
export async function setApiKey(api: CopilotApi, ask: (ownKey: boolean) => Promise<KeyChoice>): Promise<boolean> {
  const { api_key_source } = await api.llmConfig();
  const update = keyUpdate(await ask(api_key_source === 'user'));
  if (!update) {
    return false;
  }
  await api.saveLLMConfig(update);
  return true;
}

/** The sidebar's words for the key in use (never the key). */
export function keyLabel(config: Pick<LLMConfigView, 'api_key_set' | 'api_key_source'>): string {
  if (!config.api_key_set) {
    return 'no key set';
  }
  return config.api_key_source === 'user' ? 'your key set' : "administrator's key set";
}
