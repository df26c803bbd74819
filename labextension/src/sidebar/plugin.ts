/**
 * The sidebar plugin: the panel in the left area (JupyterLab 4 and Notebook 7), its
 * commands in the palette (the model API key's dialog among them), the Settings Editor
 * entry applied to the server (the panel then shows the new settings), the saved
 * answers' requests to continue a session here, and the active notebook's project
 * (`notebook-project.ts`), which the panel follows.
 */
import {
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import type { ICodeCellModel } from '@jupyterlab/cells';
import { type INotebookModel, INotebookTracker, NotebookActions, type NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import type { CopilotApi } from '../api';
import { onContinue } from '../continue';
import type { ExportCell } from './export';
import { copilotIcon } from './icon';
import { notebookProject } from './notebook-project';
import { CopilotSidebar } from './panel';
import { followSettings, SETTINGS_PLUGIN_ID } from './settings';

export const CommandIDs = {
  open: 'gns3-copilot:open',
  newChat: 'gns3-copilot:new-chat',
  showTopology: 'gns3-copilot:show-topology',
  exportSession: 'gns3-copilot:export-session',
  exportMarkdown: 'gns3-copilot:export-markdown',
  setApiKey: 'gns3-copilot:set-api-key'
} as const;

/** Insert `cells` after the active cell of the current notebook; false without one. */
function inserter(tracker: INotebookTracker | null): (cells: ExportCell[]) => boolean {
  return cells => {
    const notebook = tracker?.currentWidget?.content;
    const model = notebook?.model;
    if (!notebook || !model) {
      return false;
    }
    const at = notebook.activeCellIndex + 1;
    model.sharedModel.insertCells(
      at,
      cells.map(cell =>
        cell.cell_type === 'code'
          ? { cell_type: 'code', source: cell.source, metadata: {}, outputs: [], execution_count: null }
          : { cell_type: 'markdown', source: cell.source, metadata: {} }
      )
    );
    notebook.activeCellIndex = at + cells.length - 1;
    return true;
  };
}

/** The outputs' MIME bundles of `model`, lowest cell first. */
function* newestOutputs(model: INotebookModel): Generator<unknown> {
  for (let index = model.cells.length - 1; index >= 0; index--) {
    const cell = model.cells.get(index);
    if (cell.type !== 'code') {
      continue;
    }
    const outputs = (cell as ICodeCellModel).outputs;
    for (let at = outputs.length - 1; at >= 0; at--) {
      yield outputs.get(at).data;
    }
  }
}

/**
 * Call `onProject` with the active notebook's project (`notebookProject`) each time it
 * changes: another notebook becomes the active one, or a cell of the active one has run
 * (a `%copilot use`, an answer saved in another project).
 */
function followActiveNotebook(
  tracker: INotebookTracker,
  api: CopilotApi,
  onProject: (projectId: string) => void
): void {
  let last: string | null = null;
  const read = async (panel: NotebookPanel) => {
    const kept = await api.notebookProject(panel.context.localPath).then(
      record => record.project_id,
      () => null // an older server, or none reachable: the saved answers still tell
    );
    const model = panel.model;
    if (tracker.currentWidget !== panel || !model) {
      return;
    }
    const project = notebookProject(kept, newestOutputs(model));
    if (project && project !== last) {
      last = project;
      onProject(project);
    }
  };
  tracker.currentChanged.connect((_, panel) => {
    last = null; // another notebook: its project applies even when it is the one seen last
    if (panel) {
      void panel.context.ready.then(() => read(panel));
    }
  });
  NotebookActions.executed.connect((_, { notebook }) => {
    const panel = tracker.currentWidget;
    if (panel?.content === notebook) {
      void read(panel);
    }
  });
  if (tracker.currentWidget) {
    const panel = tracker.currentWidget;
    void panel.context.ready.then(() => read(panel));
  }
}

export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: SETTINGS_PLUGIN_ID,
  description: 'The GNS3 Copilot sidebar, its commands and settings',
  autoStart: true,
  optional: [ILayoutRestorer, ICommandPalette, INotebookTracker, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    tracker: INotebookTracker | null,
    registry: ISettingRegistry | null
  ) => {
    const sidebar = new CopilotSidebar({ insertCells: inserter(tracker) });
    sidebar.title.icon = copilotIcon;
    app.shell.add(sidebar, 'left', { rank: 600, type: 'GNS3 Copilot' });
    restorer?.add(sidebar, sidebar.id);
    app.restored.then(() => sidebar.refresh());

    const show = () => app.shell.activateById(sidebar.id);
    const { commands } = app;
    commands.addCommand(CommandIDs.open, {
      label: 'GNS3 Copilot: Open',
      icon: copilotIcon,
      execute: show
    });
    commands.addCommand(CommandIDs.newChat, {
      label: 'GNS3 Copilot: New Chat',
      execute: () => {
        show();
        sidebar.newChat();
      }
    });
    commands.addCommand(CommandIDs.showTopology, {
      label: 'GNS3 Copilot: Show Topology',
      execute: () => {
        show();
        return sidebar.showTopology();
      }
    });
    commands.addCommand(CommandIDs.exportSession, {
      label: 'GNS3 Copilot: Export Chat into the Notebook',
      execute: () => sidebar.exportToNotebook()
    });
    commands.addCommand(CommandIDs.exportMarkdown, {
      label: 'GNS3 Copilot: Export Chat as Markdown',
      execute: () => sidebar.exportMarkdown()
    });
    commands.addCommand(CommandIDs.setApiKey, {
      label: 'GNS3 Copilot: Set Model API Key',
      execute: () => {
        show();
        return sidebar.setApiKey();
      }
    });
    // A saved answer's "Continue in the Copilot sidebar" (the MIME renderer has no app).
    onContinue(document, ({ project_id, session_id }) => {
      show();
      void sidebar.openSession(project_id, session_id);
    });
    for (const command of Object.values(CommandIDs)) {
      palette?.addItem({ command, category: 'GNS3 Copilot' });
    }

    if (tracker) {
      followActiveNotebook(tracker, sidebar.api, projectId => void sidebar.followProject(projectId));
    }
    if (registry) {
      followSettings(registry, sidebar.api, {
        onMode: mode => sidebar.setDefaultMode(mode),
        onSaved: () => void sidebar.showSettings(),
        onError: message => Notification.error(message, { autoClose: false })
      }).catch(error => console.error('GNS3 Copilot: the settings could not be loaded', error));
    }
  }
};
