/** The GNS3 project selector: the server's projects, a closed one marked so. */
import type { ProjectSummary } from '../api';
import { h } from '../dom';

export class ProjectPicker {
  readonly node = h('select', { class: 'jp-gns3-copilot-sidebar-project', 'aria-label': 'GNS3 project' });

  /** `onChoose`: the person chose a project ('' for none). */
  constructor(onChoose: (projectId: string) => void) {
    this.node.addEventListener('change', () => onChoose(this.node.value));
  }

  /** List `projects`, `selected` chosen. */
  show(projects: ProjectSummary[], selected: string | null): void {
    const choose = h('option', { class: '', value: '', text: projects.length ? 'Choose a GNS3 project' : 'No GNS3 project' });
    const options = projects.map(project =>
      h('option', {
        class: '',
        value: project.project_id,
        text: `${project.name}${project.status === 'opened' ? '' : ` (${project.status ?? 'closed'})`}`
      })
    );
    this.node.replaceChildren(choose, ...options);
    this.node.value = selected ?? '';
  }

  has(projectId: string): boolean {
    return [...this.node.options].some(option => option.value === projectId);
  }
}
