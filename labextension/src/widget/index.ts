/** The anywidget front end (bundled by build-widget.mjs into the package's static/widget.js). */
// @ts-expect-error the untyped widget until its TypeScript port lands
export { default } from './legacy.js';
