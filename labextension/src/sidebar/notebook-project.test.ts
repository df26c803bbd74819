import { describe, expect, it } from 'vitest';

import { TURN_MIME_TYPE } from '../turn/types';
import { notebookProject, savedProject } from './notebook-project';

const bundle = (project_id: string) => ({ [TURN_MIME_TYPE]: { version: 1, project_id, turns: [] }, 'text/plain': '' });

describe("a notebook's project", () => {
  it("is the one the server keeps for the notebook (its kernel's), before any saved answer's", () => {
    let read = 0;
    function* outputs(): Generator<unknown> {
      read++;
      yield bundle('p-saved');
    }
    expect(notebookProject('p-kept', outputs())).toBe('p-kept');
    expect(read).toBe(0);
  });

  it("else the lowest saved answer's project, read no further than needed", () => {
    let read = 0;
    function* outputs(): Generator<unknown> {
      for (const data of [{ 'text/plain': 'x' }, bundle('p-last'), bundle('p-first')]) {
        read++;
        yield data;
      }
    }
    expect(notebookProject(null, outputs())).toBe('p-last');
    expect(read).toBe(2);
  });

  it('is none for a notebook without either (or with malformed outputs)', () => {
    expect(notebookProject(undefined, [])).toBeNull();
    expect(savedProject([{ 'text/plain': 'hi' }, null, { [TURN_MIME_TYPE]: 'x' }, { [TURN_MIME_TYPE]: { project_id: ' ' } }])).toBeNull();
    expect(notebookProject('  ', [bundle('p1')])).toBe('p1');
  });
});
