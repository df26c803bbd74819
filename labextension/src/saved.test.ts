import { describe, expect, it } from 'vitest';

import { loadFixtures } from '../test/fixtures';
import { renderBundle } from './saved';

describe('the saved-turn renderer', () => {
  it('renders every turn of a bundle and names project and session', () => {
    const turns = loadFixtures().map(f => f.turn);
    const root = renderBundle({ version: 1, project_id: 'p1', project_name: 'OSPF lab', session_id: '3f2c9a10-5b7e', mode: 'teaching', turns });
    expect(root.querySelectorAll('.jp-gns3-copilot-turn')).toHaveLength(turns.length);
    expect(root.querySelector('.gns3c-saved-footer')?.textContent).toBe('GNS3 Copilot · OSPF lab · session 3f2c9a10 · teaching · saved answer');
    expect(root.textContent).not.toContain('Explain to the user');
  });

  it('says so when the data holds no turns', () => {
    for (const bad of [null, {}, { turns: [1] }, 'x']) {
      expect(renderBundle(bad).querySelector('[role=alert]')?.textContent).toContain('could not be read');
    }
  });

});
