import { describe, expect, it } from 'vitest';

import type { CopilotApi, LLMConfigUpdate } from '../api';
import schema from '../../schema/sidebar.json';
import { keyInputNode, keyLabel, keyUpdate, setApiKey, type KeyChoice } from './api-key';
import { llmUpdate, modelFields } from './settings';

const empty = modelFields({});

describe('llmUpdate', () => {
  it('sends only the changed fields, empty meaning the administrator value (null)', () => {
    const before = modelFields({ model: 'gpt-x', baseUrl: 'http://127.0.0.1:9/v1', temperature: 0.2 });
    const after = modelFields({ model: 'gpt-y', baseUrl: '  ', temperature: 0.2 });
    expect(llmUpdate(before, after)).toEqual({ model: 'gpt-y', base_url: null });
  });

  it('nothing changed: nothing to send', () => {
    expect(llmUpdate(empty, modelFields({ provider: ' ' }))).toBeNull();
  });

  it('sends nothing key-related, whatever the settings hold', () => {
    const after = modelFields({ model: 'gpt-y', apiKey: 'sk-left-over', api_key: 'sk-left-over' });
    expect(llmUpdate(empty, after)).toEqual({ model: 'gpt-y' });
    expect(JSON.stringify(llmUpdate(empty, after))).not.toContain('sk-left-over');
  });
});

describe('the settings schema', () => {
  it('has no key field, and keeps the model fields and the default mode', () => {
    const names = Object.keys(schema.properties);
    expect(names.filter(name => /key/i.test(name))).toEqual([]);
    expect(names).toEqual(['provider', 'baseUrl', 'model', 'temperature', 'defaultMode']);
  });
});

/** A `CopilotApi` that answers whose key is set and records what would be PUT. */
function recordingApi(source: 'user' | 'admin' | null = 'user'): { api: CopilotApi; sent: LLMConfigUpdate[] } {
  const sent: LLMConfigUpdate[] = [];
  const api = {
    llmConfig: async () => ({ api_key_set: source !== null, api_key_source: source }),
    saveLLMConfig: async (update: LLMConfigUpdate) => {
      sent.push(update);
      return {};
    }
  } as unknown as CopilotApi;
  return { api, sent };
}

describe('the API key dialog', () => {
  it('asks in a password input the browser does not fill or remember', () => {
    const { node, input } = keyInputNode();
    expect(input.type).toBe('password');
    expect(input.getAttribute('autocomplete')).toBe('off');
    expect(node.contains(input)).toBe(true);
  });

  it('PUTs only the typed key (trimmed)', async () => {
    const { api, sent } = recordingApi();
    const choice: KeyChoice = { action: 'save', key: ' sk-123 ' };
    expect(await setApiKey(api, async () => choice)).toBe(true);
    expect(sent).toEqual([{ api_key: 'sk-123' }]);
  });

  it('Remove key PUTs null, which removes the key on the server', async () => {
    const { api, sent } = recordingApi();
    expect(await setApiKey(api, async () => ({ action: 'remove' }))).toBe(true);
    expect(sent).toEqual([{ api_key: null }]);
  });

  it('an empty key or Cancel sends nothing', async () => {
    const { api, sent } = recordingApi();
    expect(await setApiKey(api, async () => ({ action: 'save', key: '   ' }))).toBe(false);
    expect(await setApiKey(api, async () => ({ action: 'cancel' }))).toBe(false);
    expect(sent).toEqual([]);
    expect(keyUpdate({ action: 'save', key: '' })).toBeNull();
  });

  it("says whose key is set, from GET copilot/llm-config", () => {
    expect(keyLabel({ api_key_set: true, api_key_source: 'user' })).toBe('your key set');
    expect(keyLabel({ api_key_set: true, api_key_source: 'admin' })).toBe("administrator's key set");
    expect(keyLabel({ api_key_set: false, api_key_source: null })).toBe('no key set');
  });

  it('offers Remove key only to a user with a key of their own', async () => {
    const asked: boolean[] = [];
    for (const source of ['user', 'admin', null] as const) {
      await setApiKey(recordingApi(source).api, async own => {
        asked.push(own);
        return { action: 'cancel' };
      });
    }
    expect(asked).toEqual([true, false, false]);
  });

  it("passes the server's refusal on", async () => {
    const api = {
      llmConfig: async () => ({ api_key_set: false, api_key_source: null }),
      saveLLMConfig: async () => {
        throw new Error('In hub mode the model endpoint and key come from the copilot hub service');
      }
    } as unknown as CopilotApi;
    await expect(setApiKey(api, async () => ({ action: 'save', key: 'sk-1' }))).rejects.toThrow('hub mode');
  });
});
