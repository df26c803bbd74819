/**
 * The turn model shared by every front end (widget, saved-turn MIME renderer, sidebar).
 *
 * The types are generated from the Python reducer's (`jupyter_gns3_copilot/turns.py`, into
 * `src/generated/turns.ts`): a saved notebook holds these objects as JSON under
 * `TURN_MIME_TYPE`, and the shared fixtures in `tests/fixtures/turns/` are checked
 * against both reducers. This module adds what a schema cannot say: the MIME type and
 * names for the parts of a type.
 */
import type { ToolItem, TurnRecord } from '../generated/turns';

export type {
  ApprovalItem,
  ErrorItem,
  ProgressLine,
  TextItem,
  ToolItem,
  TurnBundle,
  TurnRecord,
  TurnStats
} from '../generated/turns';

/** The MIME type of a finished cell output: `TurnBundle` as JSON. */
export const TURN_MIME_TYPE = 'application/vnd.gns3-copilot.turns+json';

export type Item = TurnRecord['items'][number];
export type TurnStatus = TurnRecord['status'];
/** What happened to the check, not only to the delivery (a ping with 100% loss is `failed`). */
export type ToolOutcome = NonNullable<ToolItem['outcome']>;
