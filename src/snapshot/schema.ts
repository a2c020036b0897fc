import { SHAPE_PATTERN } from '../secret/value.js';
import { SNAPSHOT_SCHEMA, SNAPSHOT_SCHEMA_V1 } from './types.js';
import { HOST_OBJECT_SOURCES, hostObjectProperties } from './schema-host-objects.js';
import { CONTAINER_RUNTIME } from '../subjects/containers.js';
import { DAEMON } from '../subjects/daemon.js';
import { ENV_ENTRIES, FILES } from '../subjects/files.js';
import { HOST } from '../subjects/host.js';
import { IMAGES } from '../subjects/images.js';
import { LEDGER } from '../subjects/ledger.js';
import { MOUNT_SINCE_V2, MOUNTS } from '../subjects/mounts.js';
import { snapshotSchemaOf, type Spec } from '../subjects/spec.js';

const safeValue = {
  type: 'object',
  required: ['digest', 'shape'],
  additionalProperties: false,
  properties: {
    digest: { type: 'string', pattern: '^hmac-sha256:[0-9a-f]{64}$' },
    shape: { type: 'string', pattern: SHAPE_PATTERN },
  },
};

const safeEnv = { type: 'object', additionalProperties: { $ref: '#/$defs/safeValue' } };

const absolutePath = { type: 'string', pattern: '^/' };

/** A mount's value @1 had (src/subjects/mounts.ts: @2 added the others). */
const inV1 = (e: (typeof MOUNTS.entries)[number]): boolean =>
  !('snapshot' in e) || !MOUNT_SINCE_V2.includes(e.snapshot);

/**
 * JSON Schema of `mesh-audit/snapshot@1`, the first layout, kept to read old snapshots (history, saved
 * files) before they are migrated (migrate.ts); `snapshotSchema` below is @2, which types.ts mirrors.
 */
export const snapshotSchemaV1 = {
  $id: 'https://mesh-audit.dev/schemas/snapshot-1.json',
  type: 'object',
  required: ['schema', 'tool', 'takenAt', 'host', 'config', 'docker', 'containers', 'files', 'ledger', 'problems'],
  additionalProperties: false,
  $defs: { safeValue, envEntries: ENV_ENTRIES },
  properties: {
    schema: { const: SNAPSHOT_SCHEMA_V1 },
    tool: {
      type: 'object',
      required: ['name', 'version'],
      properties: { name: { type: 'string' }, version: { type: 'string' } },
    },
    takenAt: { type: 'string', format: 'date-time' },
    host: snapshotSchemaOf(HOST.entries),
    config: {
      type: 'object',
      required: ['managedRoots', 'labels'],
      additionalProperties: false,
      properties: {
        managedRoots: { type: 'array', items: absolutePath },
        labels: {
          type: 'object',
          required: ['module', 'resource', 'sources', 'sourceDigests'],
          additionalProperties: false,
          properties: {
            module: { type: 'string' },
            resource: { type: 'string' },
            sources: { type: 'string' },
            sourceDigests: { type: 'string' },
            envFileSyntax: { type: 'string' },
          },
        },
        envFileSyntax: { enum: ['docker', 'compose', 'auto'] },
      },
    },
    docker: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['endpoint', 'serverVersion', 'apiVersion', 'local'],
          additionalProperties: false,
          properties: {
            endpoint: { type: 'string' },
            serverVersion: { type: 'string' },
            apiVersion: { type: 'string' },
            kind: { enum: ['docker', 'podman', 'unknown'] },
            local: { type: 'boolean' },
          },
        },
      ],
    },
    containers: {
      type: 'array',
      items: {
        type: 'object',
        required: [
          'id',
          'name',
          'image',
          'created',
          'labels',
          'state',
          'env',
          'networkMode',
          'mounts',
          'ports',
          'proc',
        ],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: '^[0-9a-f]{12,64}$' },
          name: { type: 'string', minLength: 1, pattern: '^[^/]' },
          image: { type: 'string' },
          imageId: { type: 'string' },
          created: { type: 'string' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          state: {
            type: 'object',
            required: ['status', 'running', 'pid', 'startedAt', 'finishedAt', 'restartCount'],
            additionalProperties: false,
            properties: {
              status: { type: 'string' },
              running: { type: 'boolean' },
              pid: { type: 'integer', minimum: 0 },
              startedAt: { type: ['string', 'null'] },
              finishedAt: { type: ['string', 'null'] },
              restartCount: { type: 'integer', minimum: 0 },
            },
          },
          env: safeEnv,
          imageEnv: safeEnv,
          networkMode: { type: 'string' },
          mounts: { type: 'array', items: snapshotSchemaOf(MOUNTS.entries.filter(inV1)) },
          ports: {
            type: 'array',
            items: {
              type: 'object',
              required: ['containerPort', 'protocol', 'hostIp', 'hostPort'],
              additionalProperties: false,
              properties: {
                containerPort: { type: 'integer', minimum: 0, maximum: 65535 },
                protocol: { enum: ['tcp', 'udp', 'sctp'] },
                hostIp: { type: 'string' },
                hostPort: { type: 'integer', minimum: 0, maximum: 65535 },
              },
            },
          },
          proc: {
            oneOf: [
              {
                type: 'object',
                required: ['available', 'reason'],
                additionalProperties: false,
                properties: { available: { const: false }, reason: { type: 'string' } },
              },
              {
                type: 'object',
                required: ['available', 'env', 'listening', 'boundFiles'],
                additionalProperties: false,
                properties: {
                  available: { const: true },
                  env: safeEnv,
                  listening: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['protocol', 'address', 'port'],
                      additionalProperties: false,
                      properties: {
                        protocol: { enum: ['tcp', 'tcp6', 'udp', 'udp6'] },
                        address: { type: 'string' },
                        port: { type: 'integer', minimum: 0, maximum: 65535 },
                      },
                    },
                  },
                  boundFiles: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['destination', 'source', 'inode', 'sha256'],
                      additionalProperties: false,
                      properties: {
                        destination: { type: 'string' },
                        source: { type: 'string' },
                        inode: { type: ['integer', 'null'] },
                        sha256: { type: ['string', 'null'] },
                        error: { type: 'string' },
                      },
                    },
                  },
                },
              },
            ],
          },
        },
      },
    },
    files: { type: 'array', items: snapshotSchemaOf(FILES.entries) },
    ledger: {
      type: 'object',
      required: ['path', 'available', 'entries'],
      additionalProperties: false,
      properties: {
        path: { type: 'string' },
        available: { type: 'boolean' },
        node: { type: 'string' },
        adopted: { type: 'boolean' },
        entries: { type: 'array', items: snapshotSchemaOf(LEDGER.entries) },
      },
    },
    notes: { $ref: '#/properties/problems' },
    memory: {
      type: 'object',
      required: ['formerTargets'],
      additionalProperties: false,
      properties: {
        formerTargets: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'type', 'target', 'movedAt', 'lastClaimed', 'lastSeenPresent'],
            additionalProperties: false,
            properties: {
              id: { type: 'string' },
              type: { type: 'string' },
              target: { type: 'string' },
              movedAt: { type: 'string' },
              lastClaimed: { type: 'string' },
              lastSeenPresent: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
    problems: {
      type: 'array',
      items: {
        type: 'object',
        required: ['source', 'message'],
        additionalProperties: false,
        properties: {
          source: { enum: ['docker', 'proc', 'files', 'ledger', 'history', 'config'] },
          subject: { type: 'string' },
          message: { type: 'string' },
        },
      },
    },
  },
} as const;

const safeList = { type: 'array', items: { $ref: '#/$defs/safeValue' } };
const strings = { type: 'array', items: { type: 'string' } };
const integer = { type: 'integer' };

/** A part read as a whole (types.ts Collected): its fields when read, else why not. */
const collected = (required: string[], properties: Record<string, unknown>) => ({
  oneOf: [
    {
      type: 'object',
      required: ['available', 'reason'],
      additionalProperties: false,
      properties: { available: { const: false }, reason: { type: 'string' } },
    },
    {
      type: 'object',
      required: ['available', ...required],
      additionalProperties: false,
      properties: { available: { const: true }, ...properties },
    },
  ],
});

const images = collected(['images', 'tags'], {
  images: { type: 'array', items: snapshotSchemaOf(IMAGES.entries) },
  tags: { type: 'object', additionalProperties: { type: 'string' } },
});

/** A daemon setting: a boolean, a number, harmless text, or a safe value; nested as daemon.json nests. */
const daemonSetting = {
  oneOf: [
    { type: ['boolean', 'number', 'string', 'null'] },
    { $ref: '#/$defs/safeValue' },
    { type: 'array', items: { $ref: '#/$defs/daemonSetting' } },
    {
      type: 'object',
      not: { required: ['digest', 'shape'] },
      additionalProperties: { $ref: '#/$defs/daemonSetting' },
    },
  ],
};

const daemonInfo = snapshotSchemaOf(DAEMON.entries);

const daemon = {
  type: 'object',
  required: ['info', 'config', 'process', 'paths'],
  additionalProperties: false,
  properties: {
    info: collected(daemonInfo.required, daemonInfo.properties),
    config: collected(['exists', 'settings'], {
      exists: { type: 'boolean' },
      settings: { type: 'object', additionalProperties: { $ref: '#/$defs/daemonSetting' } },
    }),
    process: collected(['running', 'args', 'flags'], {
      running: { type: 'boolean' },
      args: safeList,
      flags: {
        type: 'object',
        additionalProperties: {
          type: 'array',
          items: { oneOf: [{ type: ['boolean', 'number', 'string'] }, { $ref: '#/$defs/safeValue' }] },
        },
      },
    }),
    paths: {
      type: 'array',
      items: {
        type: 'object',
        required: ['role', 'path', 'exists'],
        additionalProperties: false,
        properties: {
          role: { type: 'string' },
          path: absolutePath,
          exists: { type: ['boolean', 'null'] },
          kind: { type: 'string' },
          mode: { type: 'string', pattern: '^0[0-7]{3,4}$' },
          uid: integer,
          gid: integer,
          user: { type: 'string' },
          group: { type: 'string' },
          error: { type: 'string' },
        },
      },
    },
  },
};

type SchemaObject = Record<string, unknown> & {
  properties: Record<string, SchemaObject>;
  items: SchemaObject;
  required: string[];
  $defs: Record<string, unknown>;
};

/**
 * JSON Schema of `mesh-audit/snapshot@2` (the layout types.ts mirrors): @1 with images, the daemon,
 * each container's runtime facts (from the spec `runtime`: src/subjects/containers.ts, or a test's) and its
 * mounts' volume name, propagation and mode; networks, volumes and the host's listening sockets
 * (schema-host-objects.ts); fact sources for them in problems.
 */
export const snapshotSchemaWith = (runtime: Spec): object => {
  const v2 = structuredClone(snapshotSchemaV1) as unknown as SchemaObject;
  v2['$id'] = 'https://mesh-audit.dev/schemas/snapshot-2.json';
  v2.$defs = { ...v2.$defs, daemonSetting };
  v2.required = [...v2.required, 'images', 'daemon'];
  v2.properties['schema'] = { const: SNAPSHOT_SCHEMA } as unknown as SchemaObject;
  v2.properties['images'] = images as unknown as SchemaObject;
  v2.properties['daemon'] = daemon as unknown as SchemaObject;
  const container = v2.properties['containers']!.items;
  container.properties['runtime'] = snapshotSchemaOf(runtime) as unknown as SchemaObject;
  container.properties['mounts'] = {
    type: 'array',
    items: snapshotSchemaOf(MOUNTS.entries) as unknown as SchemaObject,
  } as unknown as SchemaObject;
  const procRead = (container.properties['proc'] as unknown as { oneOf: SchemaObject[] }).oneOf[1]!;
  procRead.properties['processes'] = strings as unknown as SchemaObject;
  const problem = v2.properties['problems']!.items.properties['source'] as unknown as { enum: string[] };
  problem.enum = [...problem.enum, 'images', 'daemon', ...HOST_OBJECT_SOURCES];
  // Networks, volumes and the host's listeners: optional (absent in a migrated @1 snapshot: not read).
  Object.assign(v2.properties, hostObjectProperties);
  return v2;
};

/** The schema of the snapshots this scanner writes and reads. */
export const snapshotSchema: object = snapshotSchemaWith(CONTAINER_RUNTIME);
