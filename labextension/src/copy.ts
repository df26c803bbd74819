/**
 * Copy buttons on the code blocks of rendered Markdown. The clipboard API needs a secure
 * page (https or localhost); elsewhere (a hub served over plain http) the text is copied
 * through a selection, and when the browser refuses both the button says to select it.
 */
import { h } from './dom';

const COPIED_FOR_MS = 1500;

/** Put `text` on the clipboard; false when the browser refused. */
export async function copyText(text: string): Promise<boolean> {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // Refused (no permission, page not focused): try the selection below.
    }
  }
  const area = h('textarea', { readonly: true, 'aria-hidden': 'true' });
  area.value = text;
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

function copyButton(pre: HTMLPreElement): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'gns3c-copy', text: 'Copy', title: 'Copy this code' });
  let reset = 0;
  button.addEventListener('click', async event => {
    event.stopPropagation();
    const copied = await copyText(pre.textContent ?? '');
    button.textContent = copied ? 'Copied' : 'Select the text to copy it';
    window.clearTimeout(reset);
    reset = window.setTimeout(() => (button.textContent = 'Copy'), COPIED_FOR_MS);
  });
  return button;
}

/** Give each code block (`<pre>`) under `host` a Copy button (once). */
export function addCopyButtons(host: HTMLElement): void {
  for (const pre of host.querySelectorAll('pre')) {
    if (pre.parentElement?.classList.contains('gns3c-code')) {
      continue;
    }
    const block = h('div', { class: 'gns3c-code' });
    pre.replaceWith(block);
    block.append(copyButton(pre), pre);
  }
}
