/**
 * The model API key's dialog (JupyterLab's `Dialog`, apart from `api-key.ts` so that the
 * key's logic loads without JupyterLab's widgets).
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { keyInputNode, type KeyChoice } from './api-key';

class KeyInput extends Widget implements Dialog.IBodyWidget<string> {
  private readonly input: HTMLInputElement;

  constructor() {
    const { node, input } = keyInputNode();
    super({ node });
    this.input = input;
  }

  getValue(): string {
    return this.input.value;
  }
}

/** Ask for the key in a JupyterLab dialog: Cancel, Save, and Remove key when the user has
 * a key of their own (the administrator's cannot be removed from here). */
export async function askForKey(ownKey: boolean): Promise<KeyChoice> {
  const remove = Dialog.warnButton({ label: 'Remove key', ariaLabel: 'Remove my key' });
  const result = await showDialog<string>({
    title: 'GNS3 Copilot: Set Model API Key',
    body: new KeyInput(),
    buttons: [Dialog.cancelButton(), ...(ownKey ? [remove] : []), Dialog.okButton({ label: 'Save' })],
    focusNodeSelector: 'input'
  });
  if (ownKey && result.button.label === remove.label) {
    return { action: 'remove' };
  }
  return result.button.accept ? { action: 'save', key: result.value ?? '' } : { action: 'cancel' };
}
