/**
 * Saved copilot turns (`TURN_MIME_TYPE`), rendered with no kernel and no widget state
 * (`saved.ts` builds the DOM). It ranks before text/markdown, so JupyterLab and
 * Notebook 7 pick it over the transcript fallback. Its "Continue in the Copilot sidebar"
 * button reaches the sidebar plugin through a DOM event (`continue.ts`).
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { renderBundle } from './saved';
import { TURN_MIME_TYPE } from './turn/types';

class SavedTurns extends Widget implements IRenderMime.IRenderer {
  constructor() {
    super();
    this.addClass('jp-gns3-copilot-saved-output');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.node.replaceChildren(renderBundle(model.data[TURN_MIME_TYPE], { continuable: true }));
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [TURN_MIME_TYPE],
  createRenderer: () => new SavedTurns()
};

const extension: IRenderMime.IExtension = {
  id: 'jupyter-gns3-copilot:saved-turns',
  description: 'Renders saved copilot turns',
  rendererFactory,
  // Before text/markdown (rank 60) and text/html (50): lower ranks win.
  rank: 0,
  dataType: 'json'
};

export default extension;
