/** The sidebar's questions to the person, in JupyterLab's dialogs. */
import { Dialog, InputDialog, showDialog } from '@jupyterlab/apputils';

import type { ChatSession } from '../api';

/** Ask before a catch-up: the server's words for what it restores; Restore is the
 * person's approval. */
export async function confirmCatchUp(stageTitle: string, description: string): Promise<boolean> {
  const result = await showDialog({
    title: `Catch up to ${stageTitle}?`,
    body: description,
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Restore' })],
    defaultButton: 0 // Enter keeps the lab: restoring loses work, so it takes a click
  });
  return result.button.accept;
}

/** Ask before giving up an exercise: the fault is then told and taken out, so it cannot
 * be practised again as it is. */
export async function confirmGiveUp(): Promise<boolean> {
  const result = await showDialog({
    title: 'Give up this exercise?',
    body: 'You will see what the fault was, and it is taken out of your lab: the devices it changed restart with the configuration saved when the exercise started.',
    buttons: [Dialog.cancelButton({ label: 'Keep trying' }), Dialog.warnButton({ label: 'Give up' })],
    defaultButton: 0
  });
  return result.button.accept;
}

/** The chat's new title (null: cancelled, or left empty). */
export async function askTitle(session: ChatSession): Promise<string | null> {
  const result = await InputDialog.getText({
    title: 'Rename chat',
    text: session.title ?? '',
    okLabel: 'Rename'
  });
  const title = result.value?.trim();
  return result.button.accept && title ? title : null;
}

/** Whether to delete the chat and its history for good. */
export async function confirmDelete(session: ChatSession): Promise<boolean> {
  const result = await showDialog({
    title: 'Delete chat',
    body: `Delete "${session.title || 'Untitled chat'}" and its history? This cannot be undone.`,
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
  });
  return result.button.accept;
}
