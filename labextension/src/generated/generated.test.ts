import { describe, expect, it } from 'vitest';

// @ts-expect-error: a plain ES module (the generator script), without type declarations
import { checkedIn, generate, SCHEMAS } from '../../scripts/generate-types.mjs';

describe('types generated from the Python models', () => {
  it.each(SCHEMAS as string[])('src/generated/%s.ts is what its schema compiles to', async name => {
    // A difference means the schema or the models changed: run `make types`.
    expect(await checkedIn(name)).toBe(await generate(name));
  });
});
