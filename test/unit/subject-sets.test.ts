import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  buildInputs,
  buildSets,
  buildSubjects,
  SUBJECT_BUILDERS,
  type SubjectBuilders,
} from '../../src/facts/subjects.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { fieldDocsOf, SUBJECT_FIELD_DOCS, unknownFieldOf } from '../../src/policy/fields.js';
import { readPolicySchema } from '../../src/policy/load.js';
import { schemaSubjectSets, schemaTextWithSubjectSets, withSubjectSets } from '../../src/policy/pack-schema.js';
import { SUBJECT_SET_NAMES, SUBJECT_SETS, subjectSet } from '../../src/policy/sets.js';
import { subjectFactory, type Subject } from '../../src/policy/subject.js';
import { subjectCatalogue } from '../../src/report/catalogue.js';
import { parseSnapshot } from '../../src/snapshot/load.js';
import { ajvFor } from '../../src/input/validate.js';
import { example, runCli } from '../support/cli.js';

/*
 * The registry of subject sets (src/policy/sets.ts) is the one place a set is named: adding one is a
 * registry entry, its data interface and its builder, and everything else follows; nothing else
 * names a set the registry does not have.
 */

/** A throwaway set, as a new one is added: its data interface, its registry entry, its builder. */
interface WidgetData {
  kind: 'widget';
  id: string;
  host: string;
  colour: string;
  parts: { count: number; spare: boolean };
}

const WITH_WIDGETS = {
  ...SUBJECT_SETS,
  widgets: subjectSet<WidgetData>({
    kind: 'widget',
    about: 'host',
    summary: 'every widget of the host',
    fields: {
      colour: 'what colour it is',
      parts: { doc: 'its parts', fields: { count: 'how many', spare: 'whether one is spare' } },
    },
  }),
};

const snapshot = parseSnapshot(
  JSON.parse(readFileSync(example('demo', 'snapshot.json'), 'utf8')),
  example('demo', 'snapshot.json'),
);

test('a set added to the registry is in the pack schema: a rule over it validates, an unknown set does not', async () => {
  const schema = withSubjectSets(await readPolicySchema(), Object.keys(WITH_WIDGETS));
  assert.equal(schemaSubjectSets(schema), [...SUBJECT_SET_NAMES, 'widgets']);
  const validate = ajvFor().compile(schema);
  const rule = (set: string) => ({
    schema: 'mesh-audit/policy@1',
    pack: { id: 'p', name: 'p', version: '1' },
    rules: [
      {
        ...{ id: 'W1', name: 'widget-colour', title: 't', severity: 'warning', subject: set },
        ...{ assert: true, message: 'm', help: 'h', remediation: 'r', tags: [], profiles: ['nightly'] },
      },
    ],
  });
  assert.ok(validate(rule('widgets')), JSON.stringify(validate.errors));
  assert.not.ok(validate(rule('gadgets')));
  // The shipped schema, without the entry, refuses it.
  assert.not.ok(ajvFor().compile(await readPolicySchema())(rule('widgets')));
});

test('a set added to the registry has its field docs (the common ones first) and its fields are checked', () => {
  const docs = fieldDocsOf(WITH_WIDGETS);
  assert.equal(Object.keys(docs.widgets), ['kind', 'id', 'host', 'colour', 'parts']);
  assert.match(docs.widgets.kind, '`widget`');
  assert.match(docs.containers.kind, '`widget`');
  // The shipped sets' docs are the registry's, unchanged by the test's registry.
  assert.not.match(SUBJECT_FIELD_DOCS.containers.kind, 'widget');
  assert.equal(
    Object.keys(fieldDocsOf(SUBJECT_SETS)),
    SUBJECT_SET_NAMES.map((s) => s),
  );
  assert.is(
    unknownFieldOf('host', ['colour']),
    "subject set host has no field 'colour' (known: " + `${Object.keys(SUBJECT_FIELD_DOCS.host).sort().join(', ')})`,
  );
});

test('`rules docs` lists every set of the registry, and a set added to it', async () => {
  const withWidgets = subjectCatalogue(fieldDocsOf(WITH_WIDGETS));
  assert.match(withWidgets, '**`widgets`**');
  assert.match(withWidgets, '| `parts.spare` | whether one is spare |');
  const { stdout, code } = await runCli(['rules', 'docs']);
  assert.is(code, 0);
  const headings = [...stdout.matchAll(/^\*\*`([a-z_]+)`\*\*$/gm)].map((m) => m[1]);
  assert.equal(headings, [...SUBJECT_SET_NAMES]);
});

test('a set added to the registry is built by its builder, beside every other set', () => {
  const builders: SubjectBuilders<typeof WITH_WIDGETS> = {
    ...SUBJECT_BUILDERS,
    widgets: ({ snapshot: s }) => [
      {
        set: 'widgets' as Subject['set'],
        about: { kind: 'host', id: 'w1' },
        part: null,
        data: { kind: 'widget', id: 'w1', host: s.host.hostname, colour: 'red', parts: { count: 2, spare: false } },
        locate: () => ({ physical: [], logical: [] }),
        resource: null,
        module: null,
      },
    ],
  };
  const sets = buildSets(WITH_WIDGETS, builders, buildInputs(snapshot));
  assert.equal(Object.keys(sets), [...SUBJECT_SET_NAMES, 'widgets']);
  assert.equal(
    sets.widgets.map((w) => w.data.colour),
    ['red'],
  );
  const dataOf = (subjects: readonly Subject[]) => subjects.map((x) => [x.set, x.about, x.part, x.data, x.unknown]);
  assert.equal(dataOf(sets.containers), dataOf(buildSubjects(snapshot).containers));
  // A builder missing for a set of the registry is a type error.
  // @ts-expect-error widgets has no builder
  const missing: SubjectBuilders<typeof WITH_WIDGETS> = { ...SUBJECT_BUILDERS };
  assert.ok(missing);
});

test('a registry entry is held to its interface, and unknown fields to its set (type errors)', () => {
  // @ts-expect-error `parts` is not documented
  subjectSet<WidgetData>({ kind: 'widget', about: 'host', summary: 's', fields: { colour: 'c' } });
  // @ts-expect-error `kind` is the interface's
  subjectSet<WidgetData>({ kind: 'gadget', about: 'host', summary: 's', fields: { colour: 'c', parts: 'p' } });
  const files = subjectFactory('files');
  // @ts-expect-error a misspelt field in an unknown list
  files.unknown('ledger', 'not read', ['claimed_byy']);
  // @ts-expect-error a field of another set
  files.unknown('docker', 'not read', ['seen']);
  const ok = files.unknown('ledger', 'not read', ['claimed_by', 'formerly_claimed_by']);
  assert.equal(
    ok.map((u) => u.field),
    ['claimed_by', 'formerly_claimed_by'],
  );
  // An unknown fact of one set is not one of another's.
  const mounts = subjectFactory('mounts');
  const subject = mounts.subject({
    id: 'web',
    part: '/etc/app.env',
    data: buildSubjects(snapshot).mounts[0]!.data,
    // @ts-expect-error `claimed_by` is no field of a mount
    unknown: ok,
    locate: () => ({ physical: [], logical: [] }),
    resource: null,
  });
  assert.equal(subject.about, { kind: 'container', id: 'web' });
  assert.is(subject.set, 'mounts');
});

test('every subject is made with what its registry entry says: set, kind and what a finding is about', () => {
  const sets = buildSubjects(snapshot);
  for (const name of SUBJECT_SET_NAMES) {
    for (const s of sets[name] as Subject<{ kind: string }>[]) {
      assert.is(s.set, name);
      assert.is(s.data.kind, SUBJECT_SETS[name].kind, name);
      assert.is(s.about.kind, SUBJECT_SETS[name].about, name);
    }
  }
});

// What names a set outside the TypeScript (which the compiler holds to the registry).

/** Files the scan reads: docs, packs, examples and tests, not dependencies, builds or reports. */
function repoFiles(dir: string): string[] {
  const skip = new Set(['node_modules', 'dist', 'reports', '.git']);
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    skip.has(d.name)
      ? []
      : d.isDirectory()
        ? repoFiles(join(dir, d.name))
        : /\.(md|ya?ml|ts|json)$/.test(d.name)
          ? [join(dir, d.name)]
          : [],
  );
}

/** Where a file names a set: `subject:` of a rule or case in YAML, and prose that gives a rule's subject set in backquotes. */
function setsNamedIn(text: string): string[] {
  return [
    ...text.matchAll(/^\s*-?\s*subject:\s*([a-z_]+)\s*(?:#.*)?$/gm),
    ...text.matchAll(/\bsubject `([a-z_]+)`/g),
  ].map((m) => m[1]!);
}

test('nothing in the docs, packs, examples or tests names a subject set the registry does not have', () => {
  const named = repoFiles(PACKAGE_ROOT).flatMap((file) =>
    setsNamedIn(readFileSync(file, 'utf8')).map((set) => ({ file: relative(PACKAGE_ROOT, file), set })),
  );
  // A check that finds nothing proves nothing: the shipped pack and the guide on writing rules name sets.
  assert.ok(named.some((n) => n.file.startsWith('policies/')) && named.some((n) => n.file === 'docs/writing-rules.md'));
  assert.equal(
    named.filter((n) => !Object.hasOwn(SUBJECT_SETS, n.set)),
    [],
  );
});

test('docs/subject-sets.md and docs/subjects/ document exactly the registry sets', () => {
  const guide = readFileSync(join(PACKAGE_ROOT, 'docs', 'subject-sets.md'), 'utf8');
  const block = /<!-- subjects:start -->([\s\S]*?)<!-- subjects:end -->/.exec(guide)?.[1];
  if (block !== undefined) {
    // One row per set, linked to its page: | [`containers`](subjects/containers.md) | …
    const rows = [...block.matchAll(/^\| \[`([a-z_]+)`\]\(subjects\/([a-z_]+)\.md\) \|/gm)];
    assert.equal(
      rows.map((m) => m[1]),
      [...SUBJECT_SET_NAMES],
      'docs/subject-sets.md subjects block (npm run docs)',
    );
    assert.ok(rows.every((m) => m[1] === m[2]));
  }
  const pages = join(PACKAGE_ROOT, 'docs', 'subjects');
  if (existsSync(pages)) {
    const named = readdirSync(pages)
      .filter((f) => f.endsWith('.md') && f !== 'README.md' && f !== 'index.md')
      .map((f) => f.replace(/\.md$/, ''));
    assert.equal(
      named.filter((n) => !Object.hasOwn(SUBJECT_SETS, n)),
      [],
      'docs/subjects/ (npm run docs)',
    );
  }
  assert.ok(block !== undefined || existsSync(pages), 'the subject sets are documented somewhere');
});

test('policies/policy.schema.json lists exactly the registry sets (fix: npm run docs)', () => {
  const text = readFileSync(join(PACKAGE_ROOT, 'policies', 'policy.schema.json'), 'utf8');
  assert.equal(schemaSubjectSets(JSON.parse(text) as object), [...SUBJECT_SET_NAMES]);
  assert.is(schemaTextWithSubjectSets(text), text);
  // The rewrite changes the list only.
  const rewritten = schemaTextWithSubjectSets(text, ['containers', 'widgets']);
  assert.equal(schemaSubjectSets(JSON.parse(rewritten) as object), ['containers', 'widgets']);
  assert.is(rewritten.split('\n').length, text.split('\n').length);
});

test.run();
