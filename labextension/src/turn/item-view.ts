/** What `TurnView` asks of the view of one item of a turn, and the view of an error item. */
import { h, icon } from '../dom';
import type { ErrorItem, Item } from './types';

export interface ItemView<T extends Item = Item> {
  readonly kind: T['kind'];
  readonly node: HTMLElement;
  update(item: T): void;
}

export class ErrorView implements ItemView<ErrorItem> {
  readonly kind = 'error';
  private readonly text = h('span');
  readonly node = h('div', { class: 'gns3c-error', role: 'alert' }, icon('alert'), this.text);

  update(item: ErrorItem): void {
    if (this.text.textContent !== item.text) {
      this.text.textContent = item.text;
    }
  }
}
