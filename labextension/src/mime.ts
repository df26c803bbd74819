/**
 * The MIME renderers of the copilot's cell outputs, drawn with no kernel and no widget
 * state (a reopened notebook): saved copilot turns (`TURN_MIME_TYPE`, `saved.ts` builds
 * the DOM) and the checklist of `%copilot check` (`CHECKS_MIME_TYPE`, `objectives/view.ts`),
 * which the kernel updates in place while it runs. Both rank before text/markdown, so
 * JupyterLab and Notebook 7 pick them over the Markdown fallback (the checklist is drawn
 * again in place on each update, so opened evidence stays open). A saved turn's
 * "Continue in the Copilot sidebar" button reaches the sidebar plugin through a DOM event
 * (`continue.ts`).
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { ChecksOutput } from './objectives/view';
import { CHECKS_MIME_TYPE } from './objectives/types';
import { renderBundle } from './saved';
import { TURN_MIME_TYPE } from './turn/types';

/** An output drawn by `render` (given the output's data each time the kernel updates
 * it, on the same renderer). */
class Rendered extends Widget implements IRenderMime.IRenderer {
  constructor(
    private readonly mimeType: string,
    private readonly render: (host: HTMLElement, data: unknown) => void
  ) {
    super();
    this.addClass('jp-gns3-copilot-saved-output');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.render(this.node, model.data[this.mimeType]);
  }
}

function factory(mimeType: string, render: () => (host: HTMLElement, data: unknown) => void): IRenderMime.IRendererFactory {
  return { safe: true, mimeTypes: [mimeType], createRenderer: () => new Rendered(mimeType, render()) };
}

export const rendererFactory = factory(TURN_MIME_TYPE, () => (host, data) =>
  host.replaceChildren(renderBundle(data, { continuable: true }))
);
export const checksRendererFactory = factory(CHECKS_MIME_TYPE, () => {
  const output = new ChecksOutput();
  return (host, data) => {
    output.render(data);
    if (output.node.parentNode !== host) {
      host.replaceChildren(output.node);
    }
  };
});

// Before text/markdown (rank 60) and text/html (50): lower ranks win.
const extensions: IRenderMime.IExtension[] = [
  {
    id: 'jupyter-gns3-copilot:saved-turns',
    description: 'Renders saved copilot turns',
    rendererFactory,
    rank: 0,
    dataType: 'json'
  },
  {
    id: 'jupyter-gns3-copilot:lab-checks',
    description: "Renders the checklist of a lab's objectives",
    rendererFactory: checksRendererFactory,
    rank: 0,
    dataType: 'json'
  }
];

export default extensions;
