// The front end's types for what the server sends, generated from the Python models' JSON
// Schema: src/generated/<name>.schema.json (written by `make types` from
// jupyter_gns3_copilot/wire_schema.py) -> src/generated/<name>.ts. `--check` writes nothing
// and fails when a checked-in .ts differs from a fresh compile (src/generated/generated.test.ts
// runs the same comparison in `npm test`).
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { compile } from 'json-schema-to-typescript';

const GENERATED = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'generated');
/** The name of every checked-in schema (`<name>.schema.json`). */
export const SCHEMAS = (await readdir(GENERATED))
  .filter(file => file.endsWith('.schema.json'))
  .map(file => file.slice(0, -'.schema.json'.length))
  .sort();

const banner = name => `/**
 * GENERATED FILE: do not edit. The TypeScript of src/generated/${name}.schema.json, the JSON
 * Schema of the Python models (jupyter_gns3_copilot/wire_schema.py). Change the models,
 * then run \`make types\` (it exports the schema and runs scripts/generate-types.mjs).
 */`;

/** The TypeScript compiled from the schema `name` (what src/generated/<name>.ts must hold). */
export async function generate(name) {
  const schema = JSON.parse(await readFile(join(GENERATED, `${name}.schema.json`), 'utf8'));
  return compile(schema, schema.title, {
    bannerComment: banner(name),
    cwd: GENERATED,
    additionalProperties: false,
    style: { singleQuote: true, printWidth: 100, trailingComma: 'none' }
  });
}

/** The checked-in file of schema `name`. */
export function checkedIn(name) {
  return readFile(join(GENERATED, `${name}.ts`), 'utf8');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = false;
  for (const name of SCHEMAS) {
    const fresh = await generate(name);
    if (!check) {
      await writeFile(join(GENERATED, `${name}.ts`), fresh);
    } else if (fresh !== (await checkedIn(name).catch(() => ''))) {
      console.error(`src/generated/${name}.ts is out of date: run \`make types\`.`);
      stale = true;
    }
  }
  process.exitCode = stale ? 1 : 0;
}
