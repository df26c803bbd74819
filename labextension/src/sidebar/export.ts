/**
 * A session exported by the server (`GET .../sessions/{s}/export?format=ipynb`: Markdown
 * cells for the text, `%copilot run DEVICE: command` cells for device commands) as the
 * cells the sidebar inserts into the active notebook.
 */

export interface ExportCell {
  cell_type: 'markdown' | 'code';
  source: string;
}

/** The cells of an nbformat 4 notebook (the server's `format=ipynb` export). */
export function cellsFromNotebook(notebookJson: string): ExportCell[] {
  const notebook = JSON.parse(notebookJson) as { cells?: { cell_type: string; source: string | string[] }[] };
  return (notebook.cells ?? [])
    .filter(cell => cell.cell_type === 'markdown' || cell.cell_type === 'code')
    .map(cell => ({
      cell_type: cell.cell_type as ExportCell['cell_type'],
      source: Array.isArray(cell.source) ? cell.source.join('') : cell.source
    }));
}
