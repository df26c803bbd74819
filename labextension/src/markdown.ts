/**
 * Markdown for every front end: markdown-it (raw HTML disabled, bare URLs linked) and
 * DOMPurify over its output. Links open in a new tab with `rel="noopener noreferrer"`.
 * The same purifier cleans the server's topology drawing before it goes inline.
 */
import DOMPurify, { type DOMPurify as Purifier } from 'dompurify';
import MarkdownIt from 'markdown-it';

let parser: MarkdownIt | null = null;
let purifier: Purifier | null = null;

function instances(): [MarkdownIt, Purifier] {
  if (!parser || !purifier) {
    parser = new MarkdownIt({ html: false, linkify: true, breaks: false });
    // Our own instance: its hook must not change how the rest of the page sanitises.
    purifier = DOMPurify(window);
    purifier.addHook('afterSanitizeAttributes', node => {
      if (node.tagName === 'A' && node.hasAttribute('href')) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
  }
  return [parser, purifier];
}

/** Sanitised HTML of `markdown`. */
export function markdownToHtml(markdown: string): string {
  const [md, purify] = instances();
  return purify.sanitize(md.render(markdown), { ADD_ATTR: ['target'] });
}

/** Replace `host`'s content with `markdown` rendered and sanitised. */
export function renderMarkdown(host: HTMLElement, markdown: string): void {
  host.innerHTML = markdownToHtml(markdown);
}

/** Sanitised HTML of one line of inline Markdown (no paragraph around it). */
export function inlineMarkdownToHtml(markdown: string): string {
  const [md, purify] = instances();
  return purify.sanitize(md.renderInline(markdown), { ADD_ATTR: ['target'] });
}

/** `host` holding one line of inline Markdown, rendered and sanitised (a text written with
 * `code` shows code, never backticks); `host` itself, to build with. */
export function withInlineMarkdown<T extends HTMLElement>(host: T, markdown: string): T {
  host.innerHTML = inlineMarkdownToHtml(markdown);
  return host;
}

/** The SVG document `svg` as an element for the page, sanitised (no scripts, no event
 * handlers, no foreign content); null when it holds no drawing. */
export function sanitizeSvg(svg: string): SVGSVGElement | null {
  const [, purify] = instances();
  const fragment = purify.sanitize(svg, { USE_PROFILES: { svg: true }, RETURN_DOM_FRAGMENT: true });
  return fragment.querySelector('svg');
}
