/** The turn fixtures shared with the Python reducer's tests (tests/fixtures/turns/). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { ChatEvent } from '../src/events';
import type { ChecksBundle, LabView } from '../src/objectives/types';
import type { TurnRecord } from '../src/turn/types';

export interface Fixture {
  name: string;
  user: string;
  events: ChatEvent[];
  turn: TurnRecord;
}

const FIXTURES = join(__dirname, '../../tests/fixtures/turns');

export function loadFixtures(): Fixture[] {
  return readdirSync(FIXTURES)
    .filter(file => file.endsWith('.json'))
    .sort()
    .map(file => JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Fixture);
}

/** One fixture's finished turn, by name. */
export function fixtureTurn(name: string): TurnRecord {
  const fixture = loadFixtures().find(f => f.name === name);
  if (!fixture) {
    throw new Error(`no fixture ${name}`);
  }
  return structuredClone(fixture.turn);
}

/** A lab check shared with the kernel's tests (tests/fixtures/checks/): the lab route's
 * answer, the check's events, and the checklist bundles the kernel displays for them
 * (one per update; the last one is what the notebook saves). */
export interface ChecksFixture {
  name: string;
  lab: LabView;
  events: ChatEvent[];
  bundles: ChecksBundle[];
}

export function loadChecksFixture(name: string): ChecksFixture {
  const file = join(__dirname, '../../tests/fixtures/checks', `${name}.json`);
  return JSON.parse(readFileSync(file, 'utf8')) as ChecksFixture;
}
