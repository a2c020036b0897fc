/**
 * What a ledger entry must look like (docs/ledger.md); fields beyond these are kept as `extra`.
 * Types the scanner joins: `container` (target: name or id), `file` (an absolute path), `network` and `volume`
 * (the engine's name), `service` (a host process's name or executable path; `holds`: its ports). Others are kept.
 */
export const ledgerEntrySchema = {
  type: 'object',
  required: ['id', 'type', 'target'],
  properties: {
    id: { type: 'string', minLength: 1 },
    type: { type: 'string', minLength: 1 },
    target: { type: 'string', minLength: 1 },
    origin: { enum: ['declared', 'found'] },
    module: { type: 'string' },
    holds: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 65535 } },
    digest: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
    sources: { type: 'array', items: { type: 'string', pattern: '^/' } },
    // null: never applied by the host — what an adoption plan proposes for a resource it found.
    applied_at: { type: ['string', 'null'], format: 'date-time' },
    // Env keys the container is given inline (`-e KEY=…`): names only, no `=` (a value written by mistake is refused).
    // Or a map of them to the values given, as some hosts record it: only the names are kept (ledger-entries.ts).
    env: {
      oneOf: [
        { type: 'array', uniqueItems: true, items: { type: 'string', minLength: 1, pattern: '^[^=\\u0000]+$' } },
        { type: 'object', propertyNames: { minLength: 1, pattern: '^[^=\\u0000]+$' } },
      ],
    },
    // Rules (id or name) the resource is allowed to break, each with why: declared once, not waived per finding.
    allow: {
      type: 'array',
      items: {
        type: 'object',
        required: ['rule', 'reason'],
        additionalProperties: false,
        properties: { rule: { type: 'string', minLength: 1 }, reason: { type: 'string', minLength: 1 } },
      },
    },
  },
  if: { properties: { type: { const: 'file' } }, required: ['type'] },
  then: { properties: { target: { type: 'string', pattern: '^/' } } },
} as const;
