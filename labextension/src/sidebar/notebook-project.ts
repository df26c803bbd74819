/**
 * The GNS3 project of a notebook, which the sidebar follows while that notebook is the
 * active one:
 * 1. the notebook's metadata `gns3_copilot.project_id` (a notebook made for one lab says
 *    so explicitly: it wins);
 * 2. otherwise the project of its last saved copilot output (the `TurnBundle` of the
 *    lowest cell holding one: what the student last used with `%copilot`).
 * A notebook with neither has no project, and the sidebar keeps what it shows.
 */
import { TURN_MIME_TYPE } from '../turn/types';

/** The notebook metadata key holding `{"project_id": ...}`. */
export const METADATA_KEY = 'gns3_copilot';

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

/**
 * The project of a notebook from its `metadata` and its outputs' MIME bundles, lowest
 * cell first (`newestOutputs`: read lazily, stopped at the first bundle found).
 */
export function notebookProject(metadata: unknown, newestOutputs: Iterable<unknown>): string | null {
  const own = (metadata as Record<string, unknown> | null)?.[METADATA_KEY];
  const named = own && typeof own === 'object' ? text((own as Record<string, unknown>).project_id) : null;
  if (named) {
    return named;
  }
  for (const data of newestOutputs) {
    const bundle = (data as Record<string, unknown> | null)?.[TURN_MIME_TYPE];
    const project = bundle && typeof bundle === 'object' ? text((bundle as Record<string, unknown>).project_id) : null;
    if (project) {
      return project;
    }
  }
  return null;
}
