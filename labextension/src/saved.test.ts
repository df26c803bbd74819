import { describe, expect, it } from 'vitest';

import { loadFixtures } from '../test/fixtures';
import { CONTINUE_EVENT, onContinue, type ContinueRequest } from './continue';
import { renderBundle } from './saved';

describe('the saved-turn renderer', () => {
  it('renders every turn of a bundle and names project and session', () => {
    const turns = loadFixtures().map(f => f.turn);
    const root = renderBundle({ version: 1, project_id: 'p1', project_name: 'OSPF lab', session_id: '3f2c9a10-5b7e', mode: 'teaching', turns });
    expect(root.querySelectorAll('.jp-gns3-copilot-turn')).toHaveLength(turns.length);
    expect(root.querySelector('.gns3c-saved-footer')?.textContent).toBe('GNS3 Copilot · OSPF lab · session 3f2c9a10 · Teaching mode · saved answer');
    expect(root.textContent).not.toContain('Explain to the user');
  });

  it('names the mode as people say it, whichever way the bundle holds it', () => {
    const turns = loadFixtures().map(f => f.turn);
    const footer = (mode: string | null) =>
      renderBundle({ version: 1, project_id: 'p1', project_name: 'Lab', session_id: 's1', mode, turns }).querySelector('.gns3c-saved-footer')?.textContent;
    expect(footer('lab_automation_assistant')).toBe('GNS3 Copilot · Lab · session s1 · Automation mode · saved answer');
    expect(footer('teaching_assistant')).toBe('GNS3 Copilot · Lab · session s1 · Teaching mode · saved answer');
    expect(footer(null)).toBe('GNS3 Copilot · Lab · session s1 · saved answer');
  });

  it('says so when the data holds no turns', () => {
    for (const bad of [null, {}, { turns: [1] }, 'x']) {
      expect(renderBundle(bad).querySelector('[role=alert]')?.textContent).toContain('could not be read');
    }
  });

  it('offers to continue the session in the sidebar, through a DOM event', () => {
    const turns = loadFixtures().map(f => f.turn);
    const bundle = { version: 1, project_id: 'p1', project_name: 'Lab', session_id: 's1', mode: null, turns };
    expect(renderBundle(bundle).querySelector('.gns3c-continue')).toBeNull();
    expect(renderBundle({ ...bundle, session_id: null }, { continuable: true }).querySelector('.gns3c-continue')).toBeNull();

    const root = renderBundle(bundle, { continuable: true });
    document.body.append(root);
    const button = root.querySelector<HTMLButtonElement>('.gns3c-continue');
    expect(button?.textContent).toBe('Continue in the Copilot sidebar');

    button?.click(); // nobody listens: the note says where to continue instead
    expect(root.querySelector('.gns3c-continue-note')?.textContent).toContain('new %copilot cell');

    const seen: ContinueRequest[] = [];
    const stop = onContinue(document, request => seen.push(request));
    button?.click();
    expect(seen).toEqual([{ project_id: 'p1', session_id: 's1' }]);
    expect(root.querySelector('.gns3c-continue-note')?.textContent).toBe('');

    // a malformed event is not taken
    const stray = new CustomEvent(CONTINUE_EVENT, { detail: { project_id: 'p1' }, bubbles: true, cancelable: true });
    expect(document.body.dispatchEvent(stray)).toBe(true);
    stop();
    button?.click();
    expect(seen).toHaveLength(1);
    root.remove();
  });
});

describe('a saved direct run (%copilot run)', () => {
  it('offers no conversation to continue and shows the device output opened', () => {
    const turn = loadFixtures().find(f => f.name === 'failed_ping')!.turn;
    const root = renderBundle(
      { version: 1, project_id: 'p1', project_name: 'Lab', session_id: null, mode: null, turns: [turn], direct_run: true },
      { continuable: true }
    );
    expect(root.querySelector('.gns3c-continue')).toBeNull();
    expect(root.querySelector('.gns3c-saved-footer')?.textContent).toBe('GNS3 Copilot · Lab · commands run without the model · saved output');
    expect(root.querySelector('.gns3c-tool-head')?.getAttribute('aria-expanded')).toBe('true');
    expect(root.querySelector('.gns3c-devices pre')?.textContent).toContain('not reachable');
  });
});
