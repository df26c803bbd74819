import { describe, expect, it } from 'vitest';

import { Composer } from './composer';

function composer() {
  const asked: string[] = [];
  const view = new Composer({ send: () => asked.push('send'), stop: () => asked.push('stop') });
  const select = view.node.querySelector<HTMLSelectElement>('.jp-gns3-copilot-sidebar-mode')!;
  const send = view.node.querySelector<HTMLButtonElement>('.jp-gns3-copilot-sidebar-send')!;
  const stop = view.node.querySelector<HTMLButtonElement>('.jp-gns3-copilot-sidebar-stop')!;
  const input = view.node.querySelector<HTMLTextAreaElement>('.jp-gns3-copilot-sidebar-input')!;
  return { view, asked, select, send, stop, input };
}

const options = (select: HTMLSelectElement) => [...select.options].map(option => `${option.value}:${option.text}`);

describe("the sidebar's input box", () => {
  it("offers the allowed modes, the Settings Editor's default first, else the user's server setting", () => {
    const { view, select } = composer();
    view.setModes({ allowed_modes: ['teaching_assistant', 'lab_automation_assistant'], copilot_mode: 'lab_automation_assistant' });
    expect(options(select)).toEqual(['teaching_assistant:Teaching mode', 'lab_automation_assistant:Automation mode']);
    expect(view.mode).toBe('lab_automation_assistant');
    expect(view.badge.textContent).toBe('Automation mode');
    expect(select.disabled).toBe(false);

    view.setDefaultMode('teaching_assistant');
    expect(view.mode).toBe('teaching_assistant');
    expect(view.badge.dataset.mode).toBe('teaching_assistant');
    view.setDefaultMode(null);
    expect(view.mode).toBe('lab_automation_assistant');
  });

  it('shows a single mode without a choice, and the server setting when the server lists none', () => {
    const { view, select } = composer();
    view.setModes({ allowed_modes: [], copilot_mode: 'teaching_assistant' });
    expect(options(select)).toEqual(['teaching_assistant:Teaching mode']);
    expect(select.disabled).toBe(true);
  });

  it('sends on Enter (not Shift+Enter); Stop shows only while a turn runs', () => {
    const { view, asked, send, stop, input } = composer();
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', shiftKey: true }));
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    send.click();
    expect(asked).toEqual(['send', 'send']);
    expect(stop.hidden).toBe(true);
    view.setRunning(true);
    expect([stop.hidden, send.disabled]).toEqual([false, true]);
    view.stopping();
    expect(stop.disabled).toBe(true);
    stop.click(); // a disabled button is not clicked
    view.setRunning(false);
    expect([stop.hidden, stop.disabled, send.disabled]).toEqual([true, false, false]);
    stop.click();
    expect(asked).toEqual(['send', 'send', 'stop']);
  });

  it('disables everything while the copilot is closed, and gives the choice back once open', () => {
    const { view, select, send, input } = composer();
    view.setModes({ allowed_modes: ['teaching_assistant', 'lab_automation_assistant'], copilot_mode: 'teaching_assistant' });
    view.setClosed(true);
    expect([input.disabled, select.disabled, send.disabled]).toEqual([true, true, true]);
    view.setRunning(false);
    expect(send.disabled).toBe(true);
    view.setClosed(false);
    expect([input.disabled, select.disabled, send.disabled]).toEqual([false, false, false]);
  });
});
