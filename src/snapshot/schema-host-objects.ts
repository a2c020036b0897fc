import { snapshotSchemaOf } from '../subjects/spec.js';
import { LISTENERS } from '../subjects/listeners.js';
import { NETWORKS } from '../subjects/networks.js';
import { VOLUMES } from '../subjects/volumes.js';

/**
 * The snapshot's networks, volumes and host listeners (types.ts NetworkRecord, VolumeRecord,
 * HostListenerView), apart from schema.ts so each part of the schema reads on its own: the records of
 * networks and volumes from their specs (src/subjects/). Every label value is a safe value
 * (`#/$defs/safeValue`); only `identity` labels (names) are kept as written.
 */

const hostListeners = {
  oneOf: [
    {
      type: 'object',
      required: ['available', 'reason'],
      additionalProperties: false,
      properties: { available: { const: false }, reason: { type: 'string' } },
    },
    {
      type: 'object',
      required: ['available', 'netns', 'sockets'],
      additionalProperties: false,
      properties: {
        available: { const: true },
        netns: { type: 'string' },
        sockets: { type: 'array', items: snapshotSchemaOf(LISTENERS.entries) },
        executables: {
          type: 'array',
          items: {
            type: 'object',
            required: ['path'],
            additionalProperties: false,
            properties: { path: { type: 'string' }, resolved: { type: 'string' }, unread: { type: 'string' } },
          },
        },
      },
    },
  ],
} as const;

/** The snapshot's properties for them: optional (absent in older snapshots: not read). */
export const hostObjectProperties = {
  networks: { oneOf: [{ type: 'null' }, { type: 'array', items: snapshotSchemaOf(NETWORKS.entries) }] },
  volumes: { oneOf: [{ type: 'null' }, { type: 'array', items: snapshotSchemaOf(VOLUMES.entries) }] },
  hostListeners,
} as const;

/** Problem sources of these collectors. */
export const HOST_OBJECT_SOURCES = ['networks', 'volumes', 'listeners'] as const;
