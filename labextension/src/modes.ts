/**
 * The copilot's modes as people read them ("Teaching mode", "Lab mode"), as the docs
 * name them. The API, the settings and saved bundles keep the mode ids; every view shows
 * `modeName` (the Python side's `mode_labels.mode_label`).
 */
const MODE_NAMES: Record<string, string> = {
  teaching_assistant: 'Teaching mode',
  teaching: 'Teaching mode',
  lab_automation_assistant: 'Lab mode',
  lab: 'Lab mode'
};

/** "Teaching mode" or "Lab mode" for a mode id or its word; any other text as it is. */
export function modeName(mode: string): string {
  return Object.prototype.hasOwnProperty.call(MODE_NAMES, mode) ? MODE_NAMES[mode] : mode;
}
