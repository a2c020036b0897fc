import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildSubjects } from '../../src/facts/subjects.js';
import { unknownFieldReads } from '../../src/policy/field-check.js';
import { fieldDocsOf, SUBJECT_FIELD_DOCS } from '../../src/policy/fields.js';
import { containerFieldDocs, SUBJECT_SETS, subjectSet } from '../../src/policy/sets.js';
import type {
  ContainerData,
  DaemonData,
  FileData,
  ImageData,
  LedgerEntryData,
  ListenerData,
  NetworkData,
  VolumeData,
} from '../../src/policy/subject-data.js';
import type { FileKind } from '../../src/fs/file-kind.js';
import type { SafeValue } from '../../src/secret/value.js';
import type { Rule } from '../../src/policy/types.js';
import { subjectCatalogue } from '../../src/report/catalogue.js';
import { parseSnapshot } from '../../src/snapshot/load.js';
import { snapshotSchema, snapshotSchemaWith } from '../../src/snapshot/schema.js';
import type {
  ContainerRuntime,
  DaemonInfo,
  EnvEntry,
  FileRecord,
  HostListener,
  ImageHealthcheck,
  LedgerRecord,
  Snapshot,
  VolumeRecord,
} from '../../src/snapshot/types.js';
import { CONTAINER_RUNTIME, type ContainerRuntimeFacts } from '../../src/subjects/containers.js';
import {
  factsWriterOf,
  INTEGER,
  read,
  snapshotSchemaOf,
  subjectDocsOf,
  type SnapshotPartOf,
  type SubjectFactsOf,
} from '../../src/subjects/spec.js';
import { ajvFor } from '../../src/input/validate.js';
import { example } from '../support/cli.js';

/*
 * A container fact is declared once, in the spec of its subject set (src/subjects/containers.ts):
 * a contributor adds one entry (and reads the value in the collector, which the entry's type holds it
 * to), and the snapshot's schema and type, the subject's field and type, its doc in `rules docs`, the
 * load-time field check and the mapping from snapshot to subject follow. Here the entry is added to a
 * copy of the spec, as data; nothing else is written for it.
 */

const SHM_SIZE = read({
  snapshot: 'shmSize',
  schema: INTEGER,
  engine: 'HostConfig.ShmSize',
  subject: 'shm_size',
  doc: 'size of its /dev/shm in bytes',
});
const WITH_SHM = [...CONTAINER_RUNTIME, SHM_SIZE] as const;

const demo = parseSnapshot(
  JSON.parse(readFileSync(example('demo', 'snapshot.json'), 'utf8')),
  example('demo', 'snapshot.json'),
);
const withRuntime = demo.containers.filter((c) => c.runtime !== undefined);

/** The demo snapshot, each container's runtime part given `more`. */
const demoWith = (more: Record<string, unknown>): Snapshot => ({
  ...demo,
  containers: demo.containers.map((c) => (c.runtime === undefined ? c : { ...c, runtime: { ...c.runtime, ...more } })),
});

// The usual identity test of two types: T is there to defer each side, not to be inferred.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Each assignable to the other (an intersection of mapped types is not Equal to one type). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

test('the types follow the spec: the snapshot part and the subject fields (checked by tsc)', () => {
  // The test's field is in the types made from its spec, with the entry's type …
  const size: SubjectFactsOf<typeof WITH_SHM>['shm_size'] = 67_108_864;
  const part: SnapshotPartOf<typeof WITH_SHM>['shmSize'] = 67_108_864;
  // @ts-expect-error … and no other
  const wrong: SubjectFactsOf<typeof WITH_SHM>['shm_size'] = '64m';
  // A collector returning a runtime part without the new value does not compile (src/collect/inspect.ts):
  // @ts-expect-error shmSize not read
  const unread: SnapshotPartOf<typeof WITH_SHM> = withRuntime[0]!.runtime!;
  // The shipped types are those of the shipped spec: ContainerData's runtime fields are the spec's, and
  // the snapshot's runtime part is the spec's part.
  const dataFromSpec: Same<Pick<ContainerData, keyof ContainerRuntimeFacts>, ContainerRuntimeFacts> = true;
  const runtimeFromSpec: Equal<ContainerRuntime, SnapshotPartOf<typeof CONTAINER_RUNTIME>> = true;
  const pids: Equal<ContainerData['pids_limit'], number | null> = true;
  const devices: Equal<ContainerData['devices'][number]['path_on_host'], string> = true;
  const command: Equal<ContainerRuntime['command'], ContainerData['command']> = true;
  // @ts-expect-error the test's field is in its spec only
  const shipped: ContainerData['shm_size'] = 0;
  assert.ok([size, part, wrong, unread, dataFromSpec, runtimeFromSpec, pids, devices, command, shipped]);
});

test('the other sets on specs keep their types: the snapshot records and the subjects (checked by tsc)', () => {
  // A value the record may lack is null in the subject; the file kinds are src/fs/file-kind.ts's.
  const fileKind: Equal<FileData['file_kind'], FileKind> = true;
  const size: Equal<FileData['size'], number | null> = true;
  const recordSize: Equal<FileRecord['size'], number | undefined> = true;
  const envValue: Equal<EnvEntry['value'], SafeValue | undefined> = true;
  // Made from the record: not its value as is.
  const healthcheck: Equal<ImageData['healthcheck'], (ImageHealthcheck & { start_period: number }) | null> = false;
  const reach: Equal<ListenerData['reach'], 'all-interfaces' | 'address' | 'loopback'> = true;
  const holder: Equal<HostListener['holderUnknown'], string | undefined> = true;
  const network: Equal<NetworkData['network_id'], string> = true;
  const volumeUsers: Equal<VolumeData['used_by'], VolumeRecord['containers']> = true;
  const daemonInfo: Equal<DaemonInfo['liveRestore'], DaemonData['live_restore']> = true;
  // A ledger record's entry names no required field (an invalid one keeps what was read safely).
  const origin: Equal<LedgerRecord['entry']['origin'], 'declared' | 'found' | undefined> = true;
  const entryId: Equal<LedgerRecord['entry']['id'], string | undefined> = true;
  const targetKind: Equal<NonNullable<LedgerEntryData['target_file']>['file_kind'], FileKind | null> = true;
  assert.ok([fileKind, size, recordSize, envValue, reach, holder, network, volumeUsers, daemonInfo]);
  assert.ok([origin, entryId, targetKind]);
  assert.not.ok(healthcheck);
});

test('the snapshot schema follows the spec: a runtime part with the new value validates, one without it does not', () => {
  const part = snapshotSchemaOf(WITH_SHM);
  assert.equal(part.properties['shmSize'], { type: 'integer' });
  assert.is(part.required.at(-1), 'shmSize');
  assert.ok(withRuntime.length > 0, 'the demo has runtime parts');
  const withShm = ajvFor().compile(snapshotSchemaWith(WITH_SHM));
  const shipped = ajvFor().compile(snapshotSchema);
  assert.ok(withShm(demoWith({ shmSize: 67_108_864 })), JSON.stringify(withShm.errors));
  assert.not.ok(withShm(demoWith({})), 'shmSize is required');
  assert.not.ok(withShm(demoWith({ shmSize: '64m' })), 'shmSize is an integer');
  // The shipped spec has no such value: the schema made from it refuses it, and takes the demo as it is.
  assert.not.ok(shipped(demoWith({ shmSize: 67_108_864 })));
  assert.ok(shipped(demo), JSON.stringify(shipped.errors));
});

/** The registry with the containers set's fields from a spec. */
const registryWith = (docs: ReturnType<typeof containerFieldDocs<typeof WITH_SHM>>) => ({
  ...SUBJECT_SETS,
  containers: subjectSet<ContainerData & SubjectFactsOf<typeof WITH_SHM>>({
    kind: 'container',
    about: 'container',
    summary: SUBJECT_SETS.containers.summary,
    fields: docs,
  }),
});

test('`rules docs` lists the new field with its doc, where the spec puts it', () => {
  const docs = fieldDocsOf(registryWith(containerFieldDocs(WITH_SHM)));
  const lines = subjectCatalogue(docs).split('\n');
  const at = lines.indexOf('| `shm_size` | size of its /dev/shm in bytes |');
  assert.ok(at > 0, 'the field is listed');
  // Last in the spec: after its last subject field, before the fields the builder adds after them.
  assert.match(lines[at - 1]!, /^\| `entrypoint` \|/);
  assert.match(lines[at + 1]!, /^\| `image_tag_now` \|/);
  assert.not.ok(subjectCatalogue().includes('`shm_size`'), 'the shipped docs do not have it');
  // The shipped docs are the shipped spec's, in its order.
  const shippedRuntime = Object.keys(subjectDocsOf(CONTAINER_RUNTIME));
  const shippedFields = Object.keys(SUBJECT_FIELD_DOCS.containers);
  const from = shippedFields.indexOf(shippedRuntime[0]!);
  assert.equal(shippedFields.slice(from, from + shippedRuntime.length), shippedRuntime);
});

test('the load-time field check knows the new field: a rule reading it loads, a misspelt one is refused', () => {
  const docs = fieldDocsOf(registryWith(containerFieldDocs(WITH_SHM)));
  const rule = (field: string): Rule => ({
    ...{ id: 'S1', name: 'small-shm', title: 't', severity: 'warning', subject: 'containers' },
    ...{ where: { var: 'running' }, assert: { '<': [{ var: field }, 1_000_000] } },
    ...{ message: 'm', help: 'h', remediation: 'r', tags: [], profiles: ['nightly'] },
  });
  assert.equal(unknownFieldReads(rule('shm_size'), docs), []);
  const misspelt = unknownFieldReads(rule('shm_sise'), docs);
  assert.is(misspelt.length, 1);
  assert.match(misspelt[0]!.message, "subject set containers has no field 'shm_sise'");
  // With the shipped spec the field is unknown: it is the spec entry that made it known.
  assert.match(unknownFieldReads(rule('shm_size'))[0]!.message, "has no field 'shm_size'");
});

test('the facts mapping follows the spec: the new value becomes the subject field; absent, its placeholder', () => {
  const write = factsWriterOf(WITH_SHM);
  const runtime = withRuntime[0]!.runtime!;
  const facts = write({ kind: 'container' }, { ...runtime, shmSize: 67_108_864 });
  assert.is(facts.shm_size, 67_108_864);
  assert.is(write({}, undefined).shm_size, 0);
  // The shipped mapping gives each container subject exactly what the builder built for it.
  const built = buildSubjects(demo).containers;
  for (const c of withRuntime) {
    const subject = built.find((s) => s.data.name === c.name)!;
    const mapped = factsWriterOf(CONTAINER_RUNTIME)({}, c.runtime);
    const keys = Object.keys(mapped) as (keyof typeof mapped)[];
    assert.ok(keys.includes('pids_limit') && keys.includes('restart_policy'));
    assert.equal(Object.fromEntries(keys.map((k) => [k, subject.data[k]])), mapped, c.name);
  }
});

test.run();
