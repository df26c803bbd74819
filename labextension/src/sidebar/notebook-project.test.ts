import { describe, expect, it } from 'vitest';

import { TURN_MIME_TYPE } from '../turn/types';
import { notebookProject } from './notebook-project';

const bundle = (project_id: string) => ({ [TURN_MIME_TYPE]: { version: 1, project_id, turns: [] }, 'text/plain': '' });

describe("a notebook's project", () => {
  it('is the metadata gns3_copilot.project_id when the notebook names one', () => {
    expect(notebookProject({ gns3_copilot: { project_id: 'p-meta' } }, [bundle('p-saved')])).toBe('p-meta');
  });

  it("else the lowest saved copilot output's project, read no further than needed", () => {
    let read = 0;
    function* outputs(): Generator<unknown> {
      for (const data of [{ 'text/plain': 'x' }, bundle('p-last'), bundle('p-first')]) {
        read++;
        yield data;
      }
    }
    expect(notebookProject({}, outputs())).toBe('p-last');
    expect(read).toBe(2);
  });

  it('is none for a notebook without either (or with malformed ones)', () => {
    expect(notebookProject({}, [])).toBeNull();
    expect(notebookProject(null, [{ 'text/plain': 'hi' }, null, { [TURN_MIME_TYPE]: 'x' }])).toBeNull();
    expect(notebookProject({ gns3_copilot: { project_id: '  ' } }, [bundle('p1')])).toBe('p1');
  });
});
