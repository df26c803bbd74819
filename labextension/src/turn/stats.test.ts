import { describe, expect, it } from 'vitest';

import { formatSeconds, formatStats } from './stats';

describe('turn stats as words', () => {
  it('says seconds, then minutes and seconds', () => {
    expect(formatSeconds(1.23)).toBe('1.2 s');
    expect(formatSeconds(59.94)).toBe('59.9 s');
    expect(formatSeconds(125.4)).toBe('2 min 05 s');
  });

  it('words tokens, model calls and time as the kernel does', () => {
    expect(formatStats({ input_tokens: 1200, output_tokens: 30, llm_calls: 2, elapsed: 3 })).toEqual([
      '1,200 in / 30 out tokens',
      '2 model calls',
      '3.0 s'
    ]);
    expect(formatStats({ input_tokens: 0, output_tokens: 0, llm_calls: 1 })).toEqual(['tokens not reported', '1 model call']);
    expect(formatStats({ input_tokens: 0, output_tokens: 0 })).toEqual(['0 in / 0 out tokens']);
    expect(formatStats({})).toEqual([]);
  });
});
