/**
 * The JupyterLab extension: plugins registered here (the MIME renderer is `mime.ts`,
 * registered through `package.json`'s `jupyterlab.mimeExtension`).
 */
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { sidebarPlugin } from './sidebar/plugin';

const plugins: JupyterFrontEndPlugin<unknown>[] = [sidebarPlugin];

export default plugins;
