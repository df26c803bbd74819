import { describe, expect, it } from 'vitest';

import { modeName } from './modes';

describe('modeName', () => {
  it('names each mode as the docs do, from its id or its word', () => {
    expect(modeName('teaching_assistant')).toBe('Teaching mode');
    expect(modeName('teaching')).toBe('Teaching mode');
    expect(modeName('lab_automation_assistant')).toBe('Automation mode');
    expect(modeName('automation')).toBe('Automation mode');
  });

  it('reads the old word "lab" (saved outputs, old notebooks) as the automation mode', () => {
    expect(modeName('lab')).toBe('Automation mode');
  });

  it('leaves any other text as it is', () => {
    expect(modeName('expert')).toBe('expert');
    expect(modeName('toString')).toBe('toString');
  });
});
