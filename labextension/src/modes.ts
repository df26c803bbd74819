/**
 * The copilot's modes as people read them ("Teaching mode", "Automation mode"), as the
 * docs name them. The API, the settings and saved bundles keep the mode ids; every view
 * shows `modeName`. The labels and words are the Python side's (`mode_labels`), read from
 * the generated mode schema, so the two cannot drift.
 */
import modes from './generated/modes.schema.json';

const LABELS: Record<string, string> = modes.labels;
/** Each mode id by the words that name it: its word, and an old word ("lab") still read. */
const IDS: Record<string, string> = {
  ...Object.fromEntries(Object.entries(modes.names).map(([id, word]) => [word, id])),
  ...modes.old_names
};

/** "Teaching mode" or "Automation mode" for a mode id or a word naming it; any other text as it is. */
export function modeName(mode: string): string {
  const id = Object.prototype.hasOwnProperty.call(IDS, mode) ? IDS[mode] : mode;
  return Object.prototype.hasOwnProperty.call(LABELS, id) ? LABELS[id] : mode;
}
