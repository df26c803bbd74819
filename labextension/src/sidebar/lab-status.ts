/**
 * The status line (GNS3, the model, the hub service: `statusParts`) and the model API
 * key's row (which key is in use, and Set key…). Reading the status is also how the
 * sidebar learns that a closed copilot answers again.
 */
import type { CopilotApi, LLMConfigView } from '../api';
import { h } from '../dom';
import { keyLabel } from './api-key';
import type { ClosedState } from './closed';
import { message } from './notice';
import { statusParts } from './status';

export class LabStatus {
  readonly line = h('div', { class: 'jp-gns3-copilot-sidebar-status' });
  readonly keyRow: HTMLElement;
  private readonly keyState = h('span', { class: 'jp-gns3-copilot-sidebar-status-part jp-gns3-copilot-sidebar-key' });
  private readonly keyButton = h('button', { class: 'jp-gns3-copilot-sidebar-set-key', text: 'Set key…' });

  /** `onSetKey`: Set key… was clicked. */
  constructor(
    private readonly api: CopilotApi,
    private readonly closed: ClosedState,
    onSetKey: () => void
  ) {
    this.keyButton.title = 'Set or remove your model API key (GNS3 Copilot: Set Model API Key)';
    this.keyButton.addEventListener('click', () => onSetKey());
    this.keyRow = h('div', { class: 'jp-gns3-copilot-sidebar-row jp-gns3-copilot-sidebar-key-row' }, this.keyState, this.keyButton);
  }

  /** Read the status and show it (an answer reopens a closed copilot). */
  async load(): Promise<void> {
    try {
      const report = await this.api.status();
      this.closed.reopen();
      this.line.replaceChildren(
        ...statusParts(report).map(part => {
          const node = h('span', { class: 'jp-gns3-copilot-sidebar-status-part', text: part.text });
          node.dataset.ok = String(part.ok);
          return node;
        })
      );
    } catch (error) {
      if (!this.closed.closedBy(error)) {
        this.line.textContent = message(error);
      }
    }
  }

  showKey(config: LLMConfigView): void {
    this.keyState.textContent = keyLabel(config);
    this.keyState.dataset.ok = String(config.api_key_set);
  }

  /** While the copilot is closed: no status, no key state (the settings were not read). */
  setClosed(closed: boolean): void {
    if (closed) {
      this.line.replaceChildren();
    }
    this.keyRow.hidden = closed;
    this.keyButton.disabled = closed;
  }
}
