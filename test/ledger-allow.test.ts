import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildSubjects } from '../src/facts/subjects.js';
import { evaluate } from '../src/evaluate/evaluate.js';
import { parsePolicyPack } from '../src/policy/load.js';
import { applyWaivers } from '../src/report/waivers.js';
import { renderSarif } from '../src/report/sarif.js';
import { renderText } from '../src/report/text.js';
import { reportOf } from '../src/pipeline.js';
import { HostModel } from './support/host-model.js';

/** A rule every container breaks, so what decides a finding's standing is the ledger alone. */
async function everyContainerRule() {
  const pack = await parsePolicyPack(
    'allow-test.yaml',
    JSON.stringify({
      schema: 'mesh-audit/policy@1',
      pack: { id: 'allow-test', name: 'allow test', version: '1' },
      rules: [
        {
          id: 'AT1',
          name: 'no-host-network',
          title: 'No container on the host network',
          severity: 'error',
          subject: 'containers',
          assert: { '!': { var: 'host_network' } },
          message: '{name} is on the host network',
          help: 'h',
          remediation: 'r',
          tags: [],
          profiles: ['nightly'],
        },
      ],
    }),
  );
  return pack.rules;
}

const host = () =>
  new HostModel('n1', '2026-09-22T00:00:00Z')
    .container({ name: 'edge', network: 'host' })
    .container({ name: 'other', network: 'host' })
    .container({ name: 'stray', network: 'host' });

test("a ledger entry allowing a rule: its container's finding is kept, suppressed with the reason and the entry; others stand", async () => {
  const rules = await everyContainerRule();
  const snapshot = host()
    .ledger([
      {
        id: 'mesh.edge',
        type: 'container',
        target: 'edge',
        allow: [{ rule: 'AT1', reason: 'serves the host port 53' }],
      },
      // By name too; an allowance of another rule allows nothing here.
      { id: 'mesh.other', type: 'container', target: 'other', allow: [{ rule: 'MA2001', reason: 'unrelated' }] },
    ])
    .build();
  const evaluation = evaluate(snapshot, buildSubjects(snapshot, []), rules);
  const byName = new Map(evaluation.findings.map((f) => [f.subject.id, f]));
  assert.equal(byName.size, 3, 'every container is still reported');
  assert.equal(byName.get('edge')!.suppressed, {
    justification: 'serves the host port 53',
    allowedBy: 'mesh.edge (/var/lib/mesh-host/ledger.json:2)',
  });
  assert.is(byName.get('other')!.suppressed, undefined);
  assert.is(byName.get('stray')!.suppressed, undefined);

  // A waiver for the same finding changes nothing: the ledger accepted it already (and the waiver is unused).
  const [waived] = applyWaivers(
    [evaluation],
    [{ rule: 'AT1', subject: '*', justification: 'all of them', expires: '2999-01-01', source: 'w.yaml:1' }],
    new Date('2026-01-01T00:00:00Z'),
  );
  const after = new Map(waived!.findings.map((f) => [f.subject.id, f]));
  assert.ok('allowedBy' in after.get('edge')!.suppressed!);
  assert.ok('expires' in after.get('stray')!.suppressed!);

  // SARIF: the allowed result is an external, accepted suppression naming the entry.
  const sarif = JSON.parse(renderSarif(reportOf([evaluation], rules, { now: new Date('2026-01-01T00:00:00Z') }))) as {
    runs: {
      results: { suppressions?: { kind: string; status: string; justification: string; properties: unknown }[] }[];
    }[];
  };
  const suppressions = sarif.runs.flatMap((r) => r.results.flatMap((x) => x.suppressions ?? []));
  assert.equal(suppressions, [
    {
      kind: 'external',
      status: 'accepted',
      justification: 'serves the host port 53',
      properties: { allowedBy: 'mesh.edge (/var/lib/mesh-host/ledger.json:2)' },
    },
  ]);

  // The text summary counts what the ledger allows and what a waiver accepts apart, each by its name.
  const summary = (evaluations: (typeof waived)[]) =>
    renderText(
      reportOf(
        evaluations.map((e) => e!),
        rules,
        { now: new Date('2026-01-01T00:00:00Z') },
      ),
      {
        color: false,
      },
    ).split('\n')[0]!;
  // An accepted finding is counted apart from the open ones (issue 47): 3 errors, one allowed, are 2 errors.
  assert.match(summary([evaluation]), '2 findings (2 errors, 0 warnings, 0 notes; 1 allowed by the ledger) on 1 host');
  assert.match(summary([waived]), '; 2 waived, 1 allowed by the ledger)');
});

test('an allow entry that is not a list of {rule, reason} makes the entry invalid (a finding of MA3xxx), allowing nothing', async () => {
  const rules = await everyContainerRule();
  const snapshot = host()
    .ledger([{ id: 'mesh.edge', type: 'container', target: 'edge', allow: [{ rule: 'AT1' }] }])
    .build();
  const record = snapshot.ledger.entries[0]!;
  assert.is(record.valid, false);
  assert.match(record.errors.join('\n'), /allow\/0 must have required property 'reason'/);
  const evaluation = evaluate(snapshot, buildSubjects(snapshot, []), rules);
  assert.ok(evaluation.findings.every((f) => f.suppressed === undefined));
});

test.run();
