/** The copilot's icon: a small network (three linked nodes), in the theme's icon colour. */
import { LabIcon } from '@jupyterlab/ui-components';

const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">
<g class="jp-icon3" fill="#616161">
<circle cx="8" cy="3" r="2"/><circle cx="3" cy="12" r="2"/><circle cx="13" cy="12" r="2"/>
<path d="M7.5 4.5 3.5 11l.9.5 4-6.5zM8.5 4.5l4 6.5-.9.5-4-6.5zM4 11.5h8v1H4z"/>
</g></svg>`;

export const copilotIcon = new LabIcon({ name: 'jupyter-gns3-copilot:icon', svgstr: svg });
