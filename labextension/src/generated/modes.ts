/**
 * GENERATED FILE: do not edit. The TypeScript of src/generated/modes.schema.json, the JSON
 * Schema of the Python models (jupyter_gns3_copilot/wire_schema.py). Change the models,
 * then run `make types` (it exports the schema and runs scripts/generate-types.mjs).
 */

export type Mode = 'teaching_assistant' | 'lab_automation_assistant';
