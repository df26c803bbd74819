/**
 * Saved copilot turns, rendered with no kernel and no widget state.
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { TURN_MIME_TYPE, type TurnBundle } from './turn/types';

class SavedTurns extends Widget implements IRenderMime.IRenderer {
  constructor() {
    super();
    this.addClass('jp-gns3-copilot-saved');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const bundle = model.data[TURN_MIME_TYPE] as unknown as TurnBundle;
    this.node.textContent = `${bundle.turns.length} copilot turn(s)`;
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
  rank: 0,
  dataType: 'json'
};

export default extension;
