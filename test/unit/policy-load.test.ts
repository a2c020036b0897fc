import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { DEFAULT_POLICY, loadPolicies, loadPack, parsePackParts, readPackParts } from '../../src/policy/load.js';
import { execFileSync } from 'node:child_process';
import { MeshAuditError } from '../../src/errors.js';
import { shippedRuleFiles } from '../support/shipped-pack.js';

const dir = mkdtempSync(join(tmpdir(), 'mesh-audit-policy-test-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

const HEAD = [
  'schema: mesh-audit/policy@1',
  'pack:',
  '  id: test-pack',
  '  name: test pack',
  '  version: 1.0.0',
  'rules:',
];

interface RuleText {
  id: string;
  name: string;
  severity?: string;
  where?: string;
  assert?: string;
  message?: string;
  extra?: string[];
}

function ruleLines(r: RuleText): string[] {
  return [
    `  - id: ${r.id}`,
    `    name: ${r.name}`,
    '    title: A rule for tests',
    `    severity: ${r.severity ?? 'error'}`,
    '    subject: containers',
    ...(r.where !== undefined ? [`    where: ${r.where}`] : []),
    ...(r.extra ?? []),
    `    assert: ${r.assert ?? '{"var": "claimed"}'}`,
    `    message: ${r.message ?? '"{name} is not claimed"'}`,
    '    help: Why it matters.',
    '    remediation: What to do.',
    '    tags: [test]',
    '    profiles: [nightly]',
  ];
}

let counter = 0;
function writePack(lines: string[], name = `pack-${++counter}.yaml`, folder = dir): string {
  const file = join(folder, name);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** 1-based line of the first line containing `marker` (after line `after`). */
function lineOf(file: string, marker: string, after = 0): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l, n) => n >= after && l.includes(marker));
  if (i < 0) throw new Error(`marker ${marker} not in ${file}`);
  return i + 1;
}

async function loadError(load: () => Promise<unknown>): Promise<MeshAuditError> {
  try {
    await load();
  } catch (err) {
    assert.instance(
      err,
      MeshAuditError,
      `expected a MeshAuditError, got ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`,
    );
    const e = err as MeshAuditError;
    assert.is(e.exitCode, 2);
    return e;
  }
  assert.unreachable('loading should have failed');
  throw new Error('unreachable');
}

/** The message starts with `file:LINE:` (optionally `:COL`) for exactly that line. */
function assertAt(e: MeshAuditError, file: string, line: number): void {
  assert.ok(e.message.startsWith(`${file}:${line}:`), `expected ${file}:${line}: in: ${e.message}`);
}

const good = suite('valid packs');

good('a small valid pack loads, and each rule knows the line of its id', async () => {
  const file = writePack([
    ...HEAD,
    ...ruleLines({ id: 'T1', name: 'rule-one' }),
    ...ruleLines({ id: 'T2', name: 'rule-two' }),
  ]);
  const [pack] = await loadPolicies({ added: [file], shipped: false });
  assert.ok(pack);
  assert.is(pack.pack.id, 'test-pack');
  assert.equal(
    pack.rules.map((r) => r.id),
    ['T1', 'T2'],
  );
  assert.is(pack.rules[0]!.source.line, lineOf(file, 'id: T1'));
  assert.is(pack.rules[1]!.source.line, lineOf(file, 'id: T2'));
  assert.is(pack.rules[1]!.source.file, file);
  assert.is(pack.rules[0]!.pack, 'test-pack');
});

good('an explicit %YAML 1.2 directive is accepted', async () => {
  const file = writePack(['%YAML 1.2', '---', ...HEAD, ...ruleLines({ id: 'T1', name: 'rule-one' })]);
  const pack = await loadPack(file);
  assert.is(pack.rules.length, 1);
});

good('the shipped pack folder mesh-core/ loads with at least 12 rules, including the incident rules', async () => {
  const pack = await loadPack(DEFAULT_POLICY);
  assert.ok(pack.rules.length >= 12, `${pack.rules.length} rules`);
  const names = pack.rules.map((r) => r.name);
  for (const name of ['container-env-matches-composed-file', 'no-unclaimed-container', 'no-stale-file-at-old-target']) {
    assert.ok(names.includes(name), `missing ${name}`);
  }
  const ids = pack.rules.map((r) => r.id);
  assert.is(new Set(ids).size, ids.length, 'ids are unique');
  assert.is(new Set(names).size, names.length, 'names are unique');
  for (const r of pack.rules) {
    assert.ok(r.name !== r.id);
    const lines = readFileSync(r.source.file, 'utf8').split('\n');
    assert.match(lines[r.source.line - 1] ?? '', new RegExp(`id: ${r.id}\\b`), `source line of ${r.id}`);
  }
});

good('every rule of the shipped pack is in the file of its ID block (MA1001 in MA1-….yaml)', async () => {
  const pack = await loadPack(DEFAULT_POLICY);
  const files = shippedRuleFiles();
  assert.ok(files.length >= 3, files.join(', '));
  for (const name of files) assert.match(name, /^[A-Z]+[0-9]+-[a-z0-9-]+\.yaml$/, `${name}: BLOCK-topic.yaml`);
  for (const r of pack.rules) {
    const block = basename(r.source.file).split('-')[0]!;
    assert.ok(r.id.startsWith(block), `${r.id} is in ${basename(r.source.file)}, not in the file of its block`);
    assert.match(r.id.slice(block.length), /^[0-9]{3}$/, `${r.id}: block ${block} and a three-digit number`);
  }
  // Each block has one file: two files for one block would let ids collide unnoticed until load.
  const blocks = files.map((n) => n.split('-')[0]);
  assert.is(new Set(blocks).size, blocks.length, blocks.join(', '));
});

good('loadPolicies with no path loads the shipped pack', async () => {
  const packs = await loadPolicies();
  assert.is(packs.length, 1);
  assert.ok(packs[0]!.rules.some((r) => r.name === 'no-unclaimed-container'));
});

good('a folder loads its *.yaml packs and skips *.cases.yaml', async () => {
  const folder = join(dir, 'folder-ok');
  mkdirSync(folder);
  writePack([...HEAD, ...ruleLines({ id: 'T1', name: 'rule-one' })], 'a.yaml', folder);
  writePack(['this is: [not a pack'], 'a.cases.yaml', folder);
  writePack(
    [
      'schema: mesh-audit/policy@1',
      'pack:',
      '  id: other-pack',
      '  name: other',
      '  version: 1.0.0',
      'rules:',
      ...ruleLines({ id: 'T2', name: 'rule-two' }),
    ],
    'b.yml',
    folder,
  );
  const packs = await loadPolicies({ added: [folder], shipped: false });
  assert.equal(
    packs.map((p) => p.pack.id),
    ['test-pack', 'other-pack'],
  );
});

/** A pack folder: pack.yaml (the header) and rule files of `schema` and `rules` only. */
function writePackFolder(name: string, files: Record<string, string[]>): string {
  const folder = join(dir, name);
  mkdirSync(folder);
  writePack(HEAD.slice(0, -1), 'pack.yaml', folder);
  for (const [file, lines] of Object.entries(files)) writePack(lines, file, folder);
  return folder;
}

good('a folder with pack.yaml is one pack: its rule files add rules, each rule keeps its own file:line', async () => {
  const folder = writePackFolder('pack-folder', {
    'T1-one.yaml': ['schema: mesh-audit/policy@1', 'rules:', ...ruleLines({ id: 'T1001', name: 'rule-one' })],
    'T2-two.yaml': [
      '# a comment',
      'schema: mesh-audit/policy@1',
      'rules:',
      ...ruleLines({ id: 'T2001', name: 'rule-two' }),
    ],
    'T2-two.cases.yaml': ['not: [a pack'],
  });
  const packs = await loadPolicies({ added: [folder], shipped: false });
  assert.is(packs.length, 1);
  assert.is(packs[0]!.pack.id, 'test-pack');
  assert.is(packs[0]!.file, folder);
  assert.equal(
    packs[0]!.parts.map((p) => basename(p)),
    ['pack.yaml', 'T1-one.yaml', 'T2-two.yaml'],
  );
  assert.equal(
    packs[0]!.rules.map((r) => [r.id, basename(r.source.file), r.source.line, r.pack]),
    [
      ['T1001', 'T1-one.yaml', 3, 'test-pack'],
      ['T2001', 'T2-two.yaml', 4, 'test-pack'],
    ],
  );
  // A folder of packs takes a pack folder inside it as one pack, beside its pack files.
  const parent = join(dir, 'packs-and-folders');
  mkdirSync(parent);
  cpSync(folder, join(parent, 'site'), { recursive: true });
  writePack(
    ['schema: mesh-audit/policy@1', 'pack:', '  id: lone', '  name: lone', '  version: 1.0.0', 'rules:'].concat(
      ruleLines({ id: 'L1', name: 'lone-rule' }),
    ),
    'lone.yaml',
    parent,
  );
  assert.equal(
    (await loadPolicies({ added: [parent], shipped: false })).map((p) => [p.pack.id, p.rules.length]),
    [
      ['lone', 1],
      ['test-pack', 2],
    ],
  );
});

good.run();

const bad = suite('invalid packs: MeshAuditError, exit 2, file:LINE, rule id');

bad('YAML syntax error is reported at its line', async () => {
  // With prettyErrors: false, yaml leaves linePos unset and every YAML error was reported at line 1.
  const file = writePack([...HEAD, ...ruleLines({ id: 'T1', name: 'rule-one' }), '  - id: [unclosed', '    name: x']);
  const e = await loadError(() => loadPack(file));
  assert.match(e.message, /YAML/);
  assertAt(e, file, lineOf(file, 'id: [unclosed') + 1);
});

bad(
  'a rule without remediation is refused at the rule, saying the old **Remediation:** paragraph moves there',
  async () => {
    const lines = ruleLines({ id: 'T2', name: 'rule-two' }).filter((l) => !l.includes('remediation:'));
    const file = writePack([...HEAD, ...ruleLines({ id: 'T1', name: 'rule-one' }), ...lines]);
    const e = await loadError(() => loadPack(file));
    assertAt(e, file, lineOf(file, 'id: T2'));
    assert.match(e.message, "rule T2: /rules/1 must have required property 'remediation'");
    assert.match(e.message, 'a **Remediation:** paragraph of help moves there');
  },
);

bad('a duplicate YAML key is reported at its line', async () => {
  const file = writePack([...HEAD, ...ruleLines({ id: 'T1', name: 'rule-one', extra: ['    title: Again'] })]);
  const e = await loadError(() => loadPack(file));
  assertAt(e, file, lineOf(file, 'title: Again'));
});

bad('schema error: bad severity, at the severity line, with the rule id', async () => {
  const file = writePack([
    ...HEAD,
    ...ruleLines({ id: 'T1', name: 'rule-one' }),
    ...ruleLines({ id: 'T2', name: 'rule-two', severity: 'fatal' }),
  ]);
  const e = await loadError(() => loadPack(file));
  assertAt(e, file, lineOf(file, 'severity: fatal'));
  assert.match(e.message, /rule T2/);
  assert.match(e.message, /severity/);
});

bad('schema error: unknown field in a rule names the field', async () => {
  const file = writePack([...HEAD, ...ruleLines({ id: 'T7', name: 'rule-seven', extra: ['    sevrity: error'] })]);
  const e = await loadError(() => loadPack(file));
  assert.match(e.message, /rule T7/);
  assert.match(e.message, /sevrity/);
  assertAt(e, file, lineOf(file, 'id: T7'));
});

bad('unknown operator in assert, at the assert line, with the rule id and operator', async () => {
  const file = writePack([
    ...HEAD,
    ...ruleLines({ id: 'T1', name: 'rule-one' }),
    ...ruleLines({ id: 'T2', name: 'rule-two', assert: '{"and": [{"var": "claimed"}, {"frobnicate": [1]}]}' }),
  ]);
  const e = await loadError(() => loadPack(file));
  assertAt(e, file, lineOf(file, 'frobnicate'));
  assert.match(e.message, /rule T2/);
  assert.match(e.message, /frobnicate/);
});

bad("unknown operator in a block-style assert points at the operator's own line", async () => {
  const file = writePack([
    ...HEAD,
    '  - id: T3',
    '    name: rule-three',
    '    title: t',
    '    severity: note',
    '    subject: containers',
    '    assert:',
    '      and:',
    '        - var: claimed',
    '        - nope: 1',
    '    message: "{name}"',
    '    help: h',
    '    remediation: r',
    '    tags: []',
    '    profiles: [nightly]',
  ]);
  const e = await loadError(() => loadPack(file));
  assertAt(e, file, lineOf(file, '- nope: 1'));
  assert.match(e.message, /rule T3/);
});

bad('object literal in where, at the where line, with the rule id', async () => {
  const file = writePack([
    ...HEAD,
    ...ruleLines({ id: 'T1', name: 'rule-one' }),
    ...ruleLines({ id: 'T2', name: 'rule-two', where: '{"==": [{"var": "labels"}, {"shape": "x"}]}' }),
  ]);
  const e = await loadError(() => loadPack(file));
  assertAt(e, file, lineOf(file, '"shape"'));
  assert.match(e.message, /rule T2/);
  assert.match(e.message, /where/);
});

bad('multi-key object literal in where is rejected too', async () => {
  const file = writePack([
    ...HEAD,
    ...ruleLines({
      id: 'T4',
      name: 'rule-four',
      where: '{"===": [{"var": "mesh"}, {"module": "a", "resource": "b"}]}',
    }),
  ]);
  const e = await loadError(() => loadPack(file));
  assertAt(e, file, lineOf(file, 'where:'));
  assert.match(e.message, /rule T4/);
});

bad('duplicate rule id in one file: at the second id, naming the first', async () => {
  const file = writePack([
    ...HEAD,
    ...ruleLines({ id: 'T1', name: 'rule-one' }),
    ...ruleLines({ id: 'T1', name: 'rule-two' }),
  ]);
  const first = lineOf(file, 'id: T1');
  const second = lineOf(file, 'id: T1', first);
  assert.ok(second > first);
  const e = await loadError(() => loadPolicies({ added: [file], shipped: false }));
  assertAt(e, file, second);
  assert.match(e.message, /rule T1/);
  assert.match(e.message, /duplicate/);
  assert.ok(e.message.includes(`${file}:${first}`), e.message);
});

bad('duplicate rule id across two files: at the second file, naming the first', async () => {
  const a = writePack([...HEAD, ...ruleLines({ id: 'T9', name: 'rule-a' })]);
  const b = writePack([
    'schema: mesh-audit/policy@1',
    'pack:',
    '  id: second-pack',
    '  name: second',
    '  version: 1.0.0',
    'rules:',
    ...ruleLines({ id: 'T8', name: 'rule-b' }),
    ...ruleLines({ id: 'T9', name: 'rule-c' }),
  ]);
  const e = await loadError(() => loadPolicies({ added: [a, b], shipped: false }));
  assertAt(e, b, lineOf(b, 'id: T9'));
  assert.match(e.message, /rule T9/);
  assert.ok(e.message.includes(`${a}:${lineOf(a, 'id: T9')}`), e.message);
});

bad('duplicate rule name across two files is an error too', async () => {
  const a = writePack([...HEAD, ...ruleLines({ id: 'T5', name: 'same-name' })]);
  const b = writePack([
    'schema: mesh-audit/policy@1',
    'pack:',
    '  id: third-pack',
    '  name: third',
    '  version: 1.0.0',
    'rules:',
    ...ruleLines({ id: 'T6', name: 'same-name' }),
  ]);
  const e = await loadError(() => loadPolicies({ added: [a, b], shipped: false }));
  assertAt(e, b, lineOf(b, 'id: T6'));
  assert.match(e.message, /rule T6/);
  assert.match(e.message, /same-name/);
});

bad('unknown message placeholder, at the message line, with the rule id and the name', async () => {
  const file = writePack([
    ...HEAD,
    ...ruleLines({ id: 'T1', name: 'rule-one' }),
    ...ruleLines({ id: 'T2', name: 'rule-two', message: '"{name} has {no_such_field.x}"' }),
  ]);
  const e = await loadError(() => loadPack(file));
  assertAt(e, file, lineOf(file, 'no_such_field'));
  assert.match(e.message, /rule T2/);
  assert.match(e.message, /no_such_field/);
});

bad('a let name is a known placeholder', async () => {
  const file = writePack([
    ...HEAD,
    ...ruleLines({
      id: 'T1',
      name: 'rule-one',
      extra: ['    let:', '      why: {"cat": ["x"]}'],
      message: '"{name}: {why}"',
    }),
  ]);
  const pack = await loadPack(file);
  assert.is(pack.rules.length, 1);
});

bad('a %YAML 1.1 directive is refused at line 1', async () => {
  const file = writePack(['%YAML 1.1', '---', ...HEAD, ...ruleLines({ id: 'T1', name: 'rule-one' })]);
  const e = await loadError(() => loadPack(file));
  assertAt(e, file, 1);
  assert.match(e.message, /1\.1|YAML 1\.2/);
});

bad('an alias bomb is refused as a policy error, not a crash', async () => {
  // doc.toJS({maxAliasCount}) throws a plain ReferenceError; uncaught, the CLI would report an internal
  // error (exit 3) instead of a policy error with file:line (exit 2).
  const row = (anchor: string, alias: string) =>
    `      ${anchor}: &${anchor} [${Array(10).fill(`*${alias}`).join(', ')}]`;
  const file = writePack([
    ...HEAD,
    ...ruleLines({
      id: 'T1',
      name: 'rule-one',
      extra: [
        '    let:',
        '      a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]',
        row('b', 'a'),
        row('c', 'b'),
        row('d', 'c'),
        row('e', 'd'),
        row('f', 'e'),
        row('g', 'f'),
      ],
    }),
  ]);
  const e = await loadError(() => loadPack(file));
  assert.match(e.message, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:`));
});

bad('a missing file is a MeshAuditError naming the file', async () => {
  const missing = join(dir, 'does-not-exist.yaml');
  const e = await loadError(() => loadPolicies({ added: [missing], shipped: false }));
  assert.ok(e.message.includes(missing), e.message);
});

bad(
  'a pack folder: a rule file naming a pack, or an unknown field in one clause, is reported at its own line',
  async () => {
    const folder = writePackFolder('pack-folder-bad', {
      'T1-one.yaml': [
        'schema: mesh-audit/policy@1',
        'pack: {id: other, name: other, version: 1.0.0}',
        'rules:',
        ...ruleLines({
          id: 'T1001',
          name: 'rule-one',
          where: '{"and": [\n      {"var": "running"},\n      {"var": "runing"}]}',
        }),
      ],
    });
    const file = join(folder, 'T1-one.yaml');
    const e = await loadError(() => loadPack(folder));
    assert.is(e.message, `${file}:2: /pack: a rule file of a pack folder names no pack (pack.yaml does)`);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^pack: .*\n/m, ''));
    const e2 = await loadError(() => loadPack(folder));
    assert.match(e2.message, new RegExp(`^${file}:${lineOf(file, '"runing"')}: rule T1001: where/and/1/var: `));
  },
);

bad('a pack folder whose rule file lacks rules, or whose pack.yaml lacks its header, says so at the file', async () => {
  const folder = writePackFolder('pack-folder-empty', { 'T1-one.yaml': ['schema: mesh-audit/policy@1'] });
  const e = await loadError(() => loadPack(folder));
  assert.match(e.message, `${join(folder, 'T1-one.yaml')}:1: (root) must have required property 'rules'`);
  writeFileSync(join(folder, 'pack.yaml'), 'schema: mesh-audit/policy@1\n');
  writeFileSync(
    join(folder, 'T1-one.yaml'),
    ['schema: mesh-audit/policy@1', 'rules:', ...ruleLines({ id: 'T1', name: 'r' })].join('\n'),
  );
  const e2 = await loadError(() => loadPack(folder));
  assert.match(e2.message, `${join(folder, 'pack.yaml')}:1: (root) must have required property 'pack'`);
});

bad.run();

const precompiledPack = suite('the bundled pack precompiled by the build');

precompiledPack('is the YAML as it loads now: same pack, same rules, same lines', async () => {
  const [bundled] = await loadPolicies();
  const parsed = await parsePackParts(DEFAULT_POLICY, await readPackParts(DEFAULT_POLICY));
  assert.equal(bundled, { ...parsed, shipped: true, rules: parsed.rules.map((r) => ({ ...r, shipped: true })) });
});

precompiledPack('is what a command uses: the YAML parser is not even loaded', () => {
  const script = `import { createRequire } from 'node:module';
    import { loadPolicies } from ${JSON.stringify(new URL('../../src/policy/load.js', import.meta.url).href)};
    const packs = await loadPolicies();
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/node_modules/yaml/'));
    console.log(JSON.stringify({ rules: packs[0].rules.length, yaml: loaded.length }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const { rules, yaml } = JSON.parse(out) as { rules: number; yaml: number };
  assert.ok(rules > 0);
  assert.is(yaml, 0, 'yaml was loaded: the precompiled pack was not used');
});

precompiledPack(
  'is not used for a pack whose text differs (a copy with one rule changed is read from its YAML)',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mesh-pack-copy-'));
    try {
      const copy = join(dir, 'mesh-core');
      cpSync(DEFAULT_POLICY, copy, { recursive: true });
      const first = join(copy, shippedRuleFiles()[0]!);
      writeFileSync(first, readFileSync(first, 'utf8').replace('severity: error', 'severity: note'));
      const [edited] = await loadPolicies({ added: [copy], shipped: false });
      const [bundled] = await loadPolicies();
      assert.is(edited!.rules[0]!.severity, 'note');
      assert.is(bundled!.rules[0]!.severity, 'error');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

precompiledPack.run();
