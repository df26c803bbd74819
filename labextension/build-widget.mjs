// The anywidget front end: one ES module bundled from the same sources as the labextension,
// and the same stylesheet (style/copilot.css) as the widget's CSS.
import { copyFile } from 'node:fs/promises';

import { build } from 'esbuild';

await build({
  entryPoints: ['src/widget/index.ts'],
  bundle: true,
  format: 'esm',
  target: 'es2020',
  minify: true,
  sourcemap: false,
  outfile: '../jupyter_gns3_copilot/static/widget.js',
  logLevel: 'warning'
});
await copyFile('style/copilot.css', '../jupyter_gns3_copilot/static/widget.css');
