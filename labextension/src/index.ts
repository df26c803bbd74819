/**
 * The JupyterLab extension: plugins registered here (the MIME renderer is `mime.ts`,
 * registered through `package.json`'s `jupyterlab.mimeExtension`).
 */
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

const plugins: JupyterFrontEndPlugin<unknown>[] = [];

export default plugins;
