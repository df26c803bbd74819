import { describe, expect, it } from 'vitest';

import { inlineMarkdownToHtml, renderMarkdown, sanitizeSvg } from './markdown';

function rendered(markdown: string): HTMLElement {
  const host = document.createElement('div');
  renderMarkdown(host, markdown);
  return host;
}

describe('renderMarkdown', () => {
  it('renders Markdown with a maintained parser', () => {
    const host = rendered('# Title\n\n**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |');
    expect(host.querySelector('h1')?.textContent).toBe('Title');
    expect(host.querySelector('strong')?.textContent).toBe('bold');
    expect(host.querySelector('code')?.textContent).toBe('code');
    expect(host.querySelectorAll('td')).toHaveLength(2);
  });

  it('drops raw HTML and event handlers', () => {
    const host = rendered('<img src=x onerror="alert(1)"> and <script>alert(2)</script>');
    expect(host.querySelector('img')).toBeNull();
    expect(host.querySelector('script')).toBeNull();
    expect(host.querySelectorAll('[onerror]')).toHaveLength(0);
    expect(host.innerHTML).not.toMatch(/<img/);
    expect(host.textContent).toContain('<img src=x onerror="alert(1)">');
  });

  it('refuses javascript: links and opens others in a new tab', () => {
    const host = rendered('[x](javascript:alert(1)) [y](https://example.org/a) see https://example.org/b');
    const links = [...host.querySelectorAll('a')];
    expect(links.map(a => a.getAttribute('href'))).toEqual(['https://example.org/a', 'https://example.org/b']);
    for (const a of links) {
      expect(a.getAttribute('target')).toBe('_blank');
      expect(a.getAttribute('rel')).toBe('noopener noreferrer');
    }
    expect(host.querySelectorAll('[href^="javascript"]')).toHaveLength(0);
    expect(host.textContent).toContain('[x](javascript:alert(1))');
  });

  it('sanitises inline Markdown too', () => {
    expect(inlineMarkdownToHtml('ran `show ip` <b onclick=x>on</b> PC1')).toBe(
      'ran <code>show ip</code> &lt;b onclick=x&gt;on&lt;/b&gt; PC1'
    );
  });
});

describe('sanitizeSvg', () => {
  it("keeps the drawing and its theme variables, drops scripts and handlers", () => {
    const svg = sanitizeSvg(
      '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50" viewBox="0 0 100 50" onload="alert(1)">' +
        '<rect width="100" height="50" style="fill: var(--jp-layout-color1, #ffffff)"/>' +
        '<script>alert(2)</script><a href="javascript:alert(3)"><text x="5" y="20">PC1</text></a>' +
        '<foreignObject><div>html</div></foreignObject></svg>'
    )!;
    expect(svg.tagName.toLowerCase()).toBe('svg');
    expect(svg.getAttribute('viewBox')).toBe('0 0 100 50');
    expect(svg.querySelector('rect')?.getAttribute('style')).toContain('var(--jp-layout-color1');
    expect(svg.querySelector('text')?.textContent).toBe('PC1');
    expect(svg.outerHTML).not.toMatch(/script|onload|javascript:|foreignObject/i);
    expect(sanitizeSvg('not a drawing')).toBeNull();
  });
});
