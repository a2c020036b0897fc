import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MeshAuditError } from '../../src/errors.js';
import { SUBJECT_FIELDS } from '../../src/policy/fields.js';
import { loadPack } from '../../src/policy/load.js';
import { example, runCli, tempDir } from '../support/cli.js';

/* A rule reading a field its subject set does not have is refused when the pack loads (src/policy/field-check.ts). */

const dir = tempDir();
let counter = 0;

/** A one-rule pack: the rule's fields as YAML lines (after `subject:`). */
function pack(subject: string, lines: string[]): string {
  const file = join(dir, `fields-${++counter}.yaml`);
  writeFileSync(
    file,
    [
      'schema: mesh-audit/policy@1',
      'pack: {id: fields, name: fields, version: "1"}',
      'rules:',
      '  - id: F1',
      '    name: field-rule',
      '    title: t',
      '    severity: warning',
      `    subject: ${subject}`,
      ...lines.map((l) => `    ${l}`),
      '    message: m',
      '    help: h',
      '    remediation: r',
      '    tags: []',
      '    profiles: [nightly]',
      '',
    ].join('\n'),
  );
  return file;
}

async function refusal(file: string): Promise<string> {
  try {
    await loadPack(file);
  } catch (err) {
    assert.instance(err, MeshAuditError);
    return (err as Error).message;
  }
  assert.unreachable(`${file} loaded`);
  return '';
}

const refused = suite('a field the subject set does not have is refused at load, with file:line');

refused('a misspelt field in assert: the file, the line of the var, the rule, the field and the set', async () => {
  const file = pack('containers', [
    'assert: {"===": [{"var": "claimed"}, true]}',
    'where:',
    '  {"===": [{"var": "nmae"}, "web"]}',
  ]);
  const message = await refusal(file);
  assert.match(message, `${file}:11: rule F1: where/===/0/var: subject set containers has no field 'nmae'`);
  assert.match(message, /known: .*\bname\b/);
});

refused('every part of a rule that decides is checked: each, let, assert, escalate, discriminator', async () => {
  const file = pack('files', [
    'each: {"var": "envv"}',
    'let: {big: {">": [{"var": "sizee"}, 10]}}',
    'assert: {"!": {"var": "claimedd"}}',
    'escalate: [{when: {"var": "exist"}, severity: error}]',
    'discriminator: {"var": "pathh"}',
  ]);
  const message = await refusal(file);
  for (const [line, where, field] of [
    [9, 'each/var', 'envv'],
    [10, 'let/big/>/0/var', 'sizee'],
    [11, 'assert/!/var', 'claimedd'],
    [12, 'escalate/0/when/var', 'exist'],
    [13, 'discriminator/var', 'pathh'],
  ] as const) {
    assert.match(message, `${file}:${line}: rule F1: ${where}: subject set files has no field '${field}'`);
  }
});

refused(
  'a path into an object of fixed shape is checked past its head; into a map, a list or a text it is not',
  async () => {
    const bad = pack('container_sources', ['assert: {"===": [{"var": "container.nmae"}, "web"]}']);
    assert.match(
      await refusal(bad),
      `${bad}:9: rule F1: assert/===/0/var: container (container_sources) has no field 'nmae' (did you mean 'name'?) (known: claimed_by, container_id, env, mesh, name, running, status)`,
    );
    const deeper = pack('container_sources', ['assert: {"!!": {"var": "container.mesh.modul"}}']);
    assert.match(await refusal(deeper), "container.mesh (container_sources) has no field 'modul'");
    const good = pack('container_sources', [
      'assert:',
      '  {"and": [{"var": "container.name"}, {"var": "source.env.DB_PASSWORD.digest"}, {"var": "container.mesh.sources.0"}, {"var": "source.path.length"}]}',
    ]);
    assert.is((await loadPack(good)).rules.length, 1);
    const labels = pack('containers', ['assert: {"!!": {"var": "labels.mesh.module"}}']);
    assert.is((await loadPack(labels)).rules.length, 1);
  },
);

refused('a key read whole from the scope with get, and the names missing asks for, are checked too', async () => {
  const get = pack('host', ['assert: {"get": [{"var": ""}, "hostnme"]}']);
  assert.match(await refusal(get), "assert/get/1: subject set host has no field 'hostnme'");
  const missing = pack('host', ['assert: {"!": {"missing": ["node", "nod"]}}']);
  assert.match(await refusal(missing), "assert/!/missing/1: subject set host has no field 'nod'");
});

refused('item outside each, and a let name in where (it is not bound there), are refused', async () => {
  const item = pack('containers', ['assert: {"var": "item"}']);
  assert.match(await refusal(item), "subject set containers has no field 'item'");
  const letInWhere = pack('containers', [
    'let: {ok: {"var": "claimed"}}',
    'where: {"var": "ok"}',
    'assert: {"var": "ok"}',
  ]);
  const message = await refusal(letInWhere);
  assert.match(message, "where/var: subject set containers has no field 'ok'");
  assert.not.match(message, 'assert/var');
});

refused.run();

const allowed = suite('what the evaluator binds is not refused');

allowed(
  'item in each, let names (earlier ones in a later let), the items of all/some/none/map/filter/reduce',
  async () => {
    const file = pack('containers', [
      'each: {"var": "open_ports"}',
      'let:',
      '  held: {"in": [{"var": "item"}, {"var": "holds"}]}',
      '  both: {"and": [{"var": "held"}, {"var": "item"}]}',
      'assert:',
      '  {"and": [',
      '    {"var": "both"},',
      '    {"all": [{"var": "ports"}, {">": [{"var": "hostPort"}, 0]}]},',
      '    {"some": [{"var": "listening"}, {"===": [{"var": "address"}, "0.0.0.0"]}]},',
      '    {"none": [{"var": "formerly_claimed_by"}, {"var": "current_target"}]},',
      '    {"map": [{"var": "ports"}, {"var": "containerPort"}]},',
      '    {"filter": [{"var": "ports"}, {"var": "protocol"}]},',
      '    {"reduce": [{"var": "holds"}, {"+": [{"var": "current"}, {"var": "accumulator"}]}, 0]}',
      '  ]}',
      'discriminator: {"cat": [{"var": "item"}, {"var": "held"}]}',
    ]);
    assert.is((await loadPack(file)).rules.length, 1);
  },
);

allowed('a path worked out at run time is not checked (it cannot be told at load)', async () => {
  const file = pack('containers', ['assert: {"var": {"cat": ["na", "me"]}}']);
  assert.is((await loadPack(file)).rules.length, 1);
});

allowed.run();

const cli = suite('the CLI refuses such a pack, exit 2');

cli('rules lint, rules docs, evaluate and scan', async () => {
  const file = pack('containers', ['assert: {"===": [{"var": "nmae"}, "web"]}']);
  const out = tempDir();
  for (const args of [
    ['rules', 'lint', '--policy', file],
    ['rules', 'docs', '--policy', file],
    ['evaluate', example('demo', 'snapshot.json'), '--policy', file, '--out', out],
    [
      'scan',
      '--policy',
      file,
      '--docker-host',
      'unix:///nonexistent.sock',
      '--ledger',
      join(dir, 'no-ledger.jsonl'),
      '--out',
      out,
    ],
  ]) {
    const run = await runCli(args);
    assert.is(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, `${file}:9: rule F1: assert/===/0/var: subject set containers has no field 'nmae'`);
  }
});

cli('rules docs lists every field of every set with what it means, paths into fixed-shape objects too', async () => {
  const run = await runCli(['rules', 'docs']);
  assert.is(run.code, 0);
  for (const [set, fields] of Object.entries(SUBJECT_FIELDS)) {
    const section = run.stdout.split(`**\`${set}\`**`)[1]!.split('\n\n**')[0]!;
    for (const field of fields)
      assert.match(section, new RegExp(`\\| \`${field}\` \\| [A-Za-z\`(]`), `${set}.${field}`);
  }
  assert.match(run.stdout, '| `container.name` | its name |');
  assert.match(run.stdout, '| `mesh.module` | the `mesh.module` label, or null |');
});

cli.run();
