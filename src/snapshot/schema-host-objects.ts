/**
 * The snapshot's networks, volumes and host listeners (types.ts NetworkRecord, VolumeRecord,
 * HostListenerView), apart from schema.ts so each part of the schema reads on its own. Every label
 * value is a safe value (`#/$defs/safeValue`); only `identity` labels (names) are kept as written.
 */

const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const;
const safeMap = { type: 'object', additionalProperties: { $ref: '#/$defs/safeValue' } } as const;
const names = { type: 'array', items: { type: 'string' } } as const;
const time = { type: ['string', 'null'] } as const;

const network = {
  type: 'object',
  required: ['id', 'name', 'driver', 'scope', 'internal', 'created', 'labels', 'identity', 'containers'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    name: { type: 'string', minLength: 1 },
    driver: { type: 'string' },
    scope: { type: 'string' },
    internal: { type: 'boolean' },
    created: time,
    labels: safeMap,
    identity: stringMap,
    containers: names,
  },
} as const;

const volume = {
  type: 'object',
  required: ['name', 'driver', 'scope', 'mountpoint', 'created', 'labels', 'identity', 'containers'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1 },
    driver: { type: 'string' },
    scope: { type: 'string' },
    mountpoint: { type: 'string' },
    created: time,
    labels: safeMap,
    identity: stringMap,
    containers: names,
  },
} as const;

const holder = {
  type: 'object',
  required: ['pid', 'name', 'exe', 'containerId'],
  additionalProperties: false,
  properties: {
    pid: { type: 'integer', minimum: 1 },
    name: { type: ['string', 'null'] },
    exe: { type: ['string', 'null'] },
    containerId: { type: ['string', 'null'], pattern: '^[0-9a-f]{64}$' },
  },
} as const;

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
        sockets: {
          type: 'array',
          items: {
            type: 'object',
            required: ['protocol', 'address', 'port', 'holder'],
            additionalProperties: false,
            properties: {
              protocol: { enum: ['tcp', 'tcp6', 'udp', 'udp6'] },
              address: { type: 'string' },
              port: { type: 'integer', minimum: 0, maximum: 65535 },
              holder: { oneOf: [{ type: 'null' }, holder] },
              holderUnknown: { type: 'string' },
            },
          },
        },
      },
    },
  ],
} as const;

/** The snapshot's properties for them: optional (absent in older snapshots: not read). */
export const hostObjectProperties = {
  networks: { oneOf: [{ type: 'null' }, { type: 'array', items: network }] },
  volumes: { oneOf: [{ type: 'null' }, { type: 'array', items: volume }] },
  hostListeners,
} as const;

/** Problem sources of these collectors. */
export const HOST_OBJECT_SOURCES = ['networks', 'volumes', 'listeners'] as const;
