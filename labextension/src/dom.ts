/** Small DOM helpers: untrusted text only ever reaches the DOM as text nodes. */

type Attrs = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | null | undefined | false;

/** An element with attributes (`class`, `text` for its text content) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    if (key === 'class') {
      el.className = String(value);
    } else if (key === 'text') {
      el.textContent = String(value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children) {
    if (child !== undefined && child !== null && child !== false) {
      el.append(child);
    }
  }
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

// Paths on a 16x16 grid; decorative (aria-hidden).
const ICONS = {
  spark: 'M8 1.5l1.6 4.2 4.4.3-3.4 2.8 1.1 4.3L8 10.7l-3.7 2.4 1.1-4.3L2 6l4.4-.3z',
  tool: 'M10.5 2a3.5 3.5 0 0 0-3.3 4.6L2.4 11.4a1.4 1.4 0 0 0 2 2l4.8-4.8A3.5 3.5 0 0 0 13.9 5l-2 2-2-.5-.5-2 2-2A3.5 3.5 0 0 0 10.5 2z',
  stop: 'M4 4h8v8H4z',
  send: 'M2 13.5l12-5.5L2 2.5l1.8 5.5zM3.8 8h6',
  alert: 'M8 1.8l6.6 12H1.4zM8 6v3.6M8 11.4v.4',
  chevron: 'M6 4l4 4-4 4',
  check: 'M3 8.5l3.2 3.2L13 4.8',
  cross: 'M4 4l8 8M12 4l-8 8',
  circle: 'M8 2.5a5.5 5.5 0 1 0 0 11a5.5 5.5 0 1 0 0-11z'
};

export function icon(name: keyof typeof ICONS, extraClass = ''): SVGSVGElement {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', `gns3c-icon ${extraClass}`.trim());
  const path = document.createElementNS(SVG_NS, 'path');
  path.setAttribute('d', ICONS[name]);
  svg.append(path);
  return svg;
}
