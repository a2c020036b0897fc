import { SAFE_MAP, STRINGS } from './common.js';
import {
  BOOLEAN,
  INTEGER,
  listOf,
  made,
  orNull,
  read,
  SAFE_VALUE,
  setSpec,
  shapeOf,
  STRING,
  type SnapshotPartOf,
  type SubjectDataOfSpec,
} from './spec.js';

/*
 * The `images` set (src/subjects/spec.ts): each image a container uses (snapshot@2), the snapshot's
 * `images.images` records (src/collect/images.ts imageRecordOf) and the subject's fields
 * (src/facts/images.ts). The records keep the order of the `read` entries; the subject's fields, and
 * their docs, the order of all entries.
 */

const ENTRIES = [
  read({
    snapshot: 'id',
    schema: { type: 'string', pattern: '^(sha256:)?[0-9a-f]{12,64}$' },
    engine: 'Id (`sha256:<hex>`)',
    subject: null,
    doc: null,
  }),
  made({ made: 'image_id', schema: STRING, doc: 'its id (`sha256:…`)', from: '`id`, `sha256:` put before it' }),
  made({ made: 'short_id', schema: STRING, doc: 'the first 12 hex digits of its id', from: '`id`' }),
  read({ snapshot: 'tags', schema: STRINGS, engine: 'RepoTags', subject: 'tags', doc: 'the tags naming it now' }),
  read({
    snapshot: 'digests',
    schema: STRINGS,
    engine: 'RepoDigests',
    subject: 'digests',
    doc: 'its repository digests (`name@sha256:…`)',
  }),
  read({
    snapshot: 'created',
    schema: STRING,
    engine: 'Created',
    subject: 'created',
    doc: 'when it was built (RFC 3339)',
  }),
  read({
    snapshot: 'labels',
    schema: SAFE_MAP,
    engine: "Config.Labels, values secret-safe: an image's labels are anyone's text",
    subject: 'labels',
    doc: 'its labels, `{key: {digest, shape}}`',
  }),
  read({
    snapshot: 'env',
    schema: SAFE_MAP,
    engine: 'Config.Env',
    subject: 'env',
    doc: 'its own env, `{KEY: {digest, shape}}`',
  }),
  read({
    snapshot: 'user',
    schema: STRING,
    engine: 'Config.User; `` is root',
    subject: 'user',
    doc: 'the user it runs as, `` for root',
  }),
  read({
    snapshot: 'healthcheck',
    schema: orNull(
      shapeOf({
        test: listOf(SAFE_VALUE),
        interval: INTEGER,
        timeout: INTEGER,
        retries: INTEGER,
        startPeriod: INTEGER,
      }),
    ),
    engine: 'Config.Healthcheck (durations in nanoseconds, 0: the default); null when it has none, or `NONE`',
    subject: null,
    doc: null,
  }),
  made({
    made: 'healthcheck',
    schema: orNull(
      shapeOf({
        test: listOf(SAFE_VALUE),
        interval: INTEGER,
        timeout: INTEGER,
        retries: INTEGER,
        start_period: INTEGER,
      }),
    ),
    doc: {
      doc: 'its healthcheck, or null',
      fields: {
        test: 'the test, each argument `{digest, shape}`',
        interval: 'nanoseconds between checks, 0: the default',
        timeout: 'nanoseconds before a check fails, 0: the default',
        retries: 'failures in a row before unhealthy, 0: the default',
        start_period: 'nanoseconds of grace after start, 0: the default',
      },
    },
    from: '`healthcheck`, `startPeriod` named `start_period`',
  }),
  made({ made: 'has_healthcheck', schema: BOOLEAN, doc: 'whether it has a healthcheck', from: '`healthcheck`' }),
  made({
    made: 'dangling',
    schema: BOOLEAN,
    doc: 'whether no tag names it any more (a tag it had was moved or removed)',
    from: "the engine's tags (`images.tags`)",
  }),
  made({ made: 'used_by', schema: STRINGS, doc: 'names of the containers running it', from: 'the containers' }),
  made({
    made: 'claimed_users',
    schema: STRINGS,
    doc: 'names of the claimed containers running it',
    from: 'the containers and the ledger',
  }),
  made({
    made: 'used_by_scanner_only',
    schema: BOOLEAN,
    doc: "whether only the scanner's own container runs it (the hardening rules leave it out)",
    from: 'the containers',
  }),
] as const;

export const IMAGES = setSpec({
  kind: 'image',
  about: 'image',
  summary: 'each image a container uses (snapshot@2), with the containers using it',
  entries: ENTRIES,
});

/** An image as the snapshot holds it. */
export type ImageRecord = SnapshotPartOf<typeof IMAGES.entries>;

/** An `images` subject's data. */
export type ImageData = SubjectDataOfSpec<typeof IMAGES>;
