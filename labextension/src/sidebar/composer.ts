/**
 * The sidebar's input box: the message (Enter sends, Shift+Enter a new line), Send, Stop
 * (shown while a turn runs) and the mode selector with its badge (shown in the header).
 * The mode offered first is the Settings Editor's default, else the user's server setting.
 */
import type { LLMConfigView } from '../api';
import { h } from '../dom';
import { modeName } from '../modes';

export interface ComposerActions {
  send(): void;
  stop(): void;
}

export class Composer {
  readonly node: HTMLElement;
  /** The chosen mode's name, for the header. */
  readonly badge = h('span', { class: 'jp-gns3-copilot-sidebar-mode-badge' });
  private readonly input = h('textarea', { class: 'jp-gns3-copilot-sidebar-input' });
  private readonly sendButton = h('button', { class: 'jp-gns3-copilot-sidebar-send jp-mod-accept', text: 'Send' });
  private readonly stopButton = h('button', { class: 'jp-gns3-copilot-sidebar-stop', text: 'Stop' });
  private readonly modeSelect = h('select', { class: 'jp-gns3-copilot-sidebar-mode' });
  private allowedModes: string[] = [];
  private settingsMode: string | null = null;
  private serverMode: string | null = null;
  private running = false;
  private closed = false;

  constructor(actions: ComposerActions) {
    this.input.placeholder = 'Ask the copilot (Enter sends, Shift+Enter: new line)';
    this.input.rows = 3;
    this.input.setAttribute('aria-label', 'Message to the copilot');
    this.input.addEventListener('keydown', event => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        actions.send();
      }
    });
    this.sendButton.addEventListener('click', () => actions.send());
    this.stopButton.addEventListener('click', () => actions.stop());
    this.stopButton.hidden = true;
    this.modeSelect.setAttribute('aria-label', 'Copilot mode');
    this.modeSelect.addEventListener('change', () => this.renderBadge());
    const controls = h('div', { class: 'jp-gns3-copilot-sidebar-row' }, this.modeSelect, this.stopButton, this.sendButton);
    this.node = h('div', { class: 'jp-gns3-copilot-sidebar-composer' }, this.input, controls);
  }

  /** The message typed. */
  get text(): string {
    return this.input.value;
  }

  /** The mode chosen (null: the server's). */
  get mode(): string | null {
    return this.modeSelect.value || null;
  }

  clearText(): void {
    this.input.value = '';
  }

  focus(): void {
    this.input.focus();
  }

  /** The mode the sidebar asks in by default (the user's setting; null: the server's). */
  setDefaultMode(mode: string | null): void {
    this.settingsMode = mode || null;
    this.renderModes();
  }

  /** The modes the server allows and the user's server setting. */
  setModes(config: Pick<LLMConfigView, 'allowed_modes' | 'copilot_mode'>): void {
    this.allowedModes = config.allowed_modes;
    this.serverMode = config.copilot_mode;
    this.renderModes();
  }

  /** While a turn runs: Stop shown, Send disabled. */
  setRunning(running: boolean): void {
    this.running = running;
    this.stopButton.hidden = !running;
    this.stopButton.disabled = false;
    this.sendButton.disabled = running || this.closed;
  }

  /** Stop was asked: not again until the turn has ended. */
  stopping(): void {
    this.stopButton.disabled = true;
  }

  /** While the copilot is closed nothing here can be used. */
  setClosed(closed: boolean): void {
    this.closed = closed;
    this.input.disabled = closed;
    this.modeSelect.disabled = closed;
    this.sendButton.disabled = closed || this.running;
    if (!closed) {
      this.renderModes(); // the mode selector is enabled only with a choice
    }
  }

  private renderModes(): void {
    const preferred = this.settingsMode ?? this.serverMode;
    const modes = this.allowedModes.length ? this.allowedModes : preferred ? [preferred] : [];
    this.modeSelect.replaceChildren(
      ...modes.map(mode => h('option', { class: '', value: mode, text: modeName(mode) }))
    );
    if (preferred && modes.includes(preferred)) {
      this.modeSelect.value = preferred;
    }
    this.modeSelect.disabled = modes.length < 2 || this.closed;
    this.renderBadge();
  }

  private renderBadge(): void {
    const mode = this.modeSelect.value;
    this.badge.textContent = mode ? modeName(mode) : '';
    this.badge.dataset.mode = mode;
  }
}
