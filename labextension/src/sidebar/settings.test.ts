import { describe, expect, it } from 'vitest';

import { llmUpdate, modelFields } from './settings';

const empty = modelFields({});

describe('llmUpdate', () => {
  it('sends only the changed fields, empty meaning the administrator value (null)', () => {
    const before = modelFields({ model: 'gpt-x', baseUrl: 'http://127.0.0.1:9/v1', temperature: 0.2 });
    const after = modelFields({ model: 'gpt-y', baseUrl: '  ', temperature: 0.2 });
    expect(llmUpdate(before, after, '')).toEqual({ model: 'gpt-y', base_url: null });
  });

  it('nothing changed and no key: nothing to send', () => {
    expect(llmUpdate(empty, modelFields({ provider: ' ' }), '')).toBeNull();
  });

  it('sends a typed key (trimmed); a lone space removes the key', () => {
    expect(llmUpdate(empty, empty, ' sk-123 ')).toEqual({ api_key: 'sk-123' });
    expect(llmUpdate(empty, empty, ' ')).toEqual({ api_key: null });
  });
});
