// The anywidget front end: one ES module bundled from the same sources as the labextension.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/widget/index.ts'],
  bundle: true,
  format: 'esm',
  target: 'es2020',
  minify: true,
  sourcemap: false,
  outfile: '../jupyter_gns3_copilot/static/widget.js',
  loader: { '.css': 'text' },
  logLevel: 'warning'
});
