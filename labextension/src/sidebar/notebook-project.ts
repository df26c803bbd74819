/**
 * The GNS3 project of a notebook, which the sidebar follows while that notebook is the
 * active one:
 * 1. the project its kernel uses, as the server keeps it for the notebook
 *    (`copilot/notebook-projects`: recorded by `%copilot use` and each new conversation,
 *    and what a restarted kernel takes back), so the sidebar and the magics agree;
 * 2. otherwise the project of its lowest saved copilot answer (a notebook opened by
 *    someone whose kernel never ran it: handed in, or copied).
 * A notebook with neither has no project, and the sidebar keeps what it shows.
 */
import { TURN_MIME_TYPE } from '../turn/types';

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

/** The project of the first saved answer among a notebook's output MIME bundles, lowest
 * cell first (`newestOutputs`: read lazily, no further than that answer). */
export function savedProject(newestOutputs: Iterable<unknown>): string | null {
  for (const data of newestOutputs) {
    const bundle = (data as Record<string, unknown> | null)?.[TURN_MIME_TYPE];
    const project = bundle && typeof bundle === 'object' ? text((bundle as Record<string, unknown>).project_id) : null;
    if (project) {
      return project;
    }
  }
  return null;
}

/** The notebook's project: the one the server keeps for it (`kept`), else its saved
 * answers'. */
export function notebookProject(kept: string | null | undefined, newestOutputs: Iterable<unknown>): string | null {
  return text(kept) ?? savedProject(newestOutputs);
}
