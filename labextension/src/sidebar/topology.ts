/**
 * The project's topology drawing, folded until opened (then fetched; Refresh fetches it
 * again). Inline, not an <img>: an image would not take the theme's colours (its CSS
 * variables do not reach into it); sanitised like any server text put into the page.
 */
import type { CopilotApi } from '../api';
import { h } from '../dom';
import { sanitizeSvg } from '../markdown';
import type { Notice } from './notice';

export class TopologyView {
  readonly node = h('details', { class: 'jp-gns3-copilot-sidebar-topology' });
  private readonly drawing = h('div', { class: 'jp-gns3-copilot-sidebar-topology-drawing' });

  /** `projectId`: the chosen project (null: none, nothing to draw). */
  constructor(
    private readonly api: CopilotApi,
    private readonly projectId: () => string | null,
    private readonly notice: Notice
  ) {
    const reload = h('button', { class: 'jp-gns3-copilot-sidebar-topology-reload', text: 'Refresh' });
    reload.addEventListener('click', () => void this.load());
    this.node.append(h('summary', { class: '', text: 'Topology' }), reload, this.drawing);
    this.node.addEventListener('toggle', () => {
      if (this.node.open && !this.drawing.childElementCount) {
        void this.load();
      }
    });
  }

  get open(): boolean {
    return this.node.open;
  }

  /** Open the drawing and fetch it again. */
  async show(): Promise<void> {
    this.node.open = true;
    await this.load();
  }

  /** Fetch the drawing of the chosen project. */
  async load(): Promise<void> {
    const projectId = this.projectId();
    if (!projectId) {
      return;
    }
    try {
      const drawing = sanitizeSvg(await this.api.topologySvg(projectId));
      this.drawing.replaceChildren(...(drawing ? [drawing] : []));
    } catch (error) {
      this.notice.fail(error);
    }
  }

  clear(): void {
    this.drawing.replaceChildren();
  }
}
