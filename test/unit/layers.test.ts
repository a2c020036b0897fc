import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../../src/paths.js';

// ARCHITECTURE.md: imports run one way (cli -> pipeline -> report/evaluate -> facts -> policy/snapshot
// -> small helpers); nothing imports src/cli/, and src/collect/ (the only readers of the host) is
// imported only by src/scan.ts. The map says so; this test keeps it true.
const SRC = join(PACKAGE_ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

/** Every relative module a file imports (static `from '…'` and dynamic `import('…')`), as paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/\bfrom\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g)].map(
    (m) => (m[1] ?? m[2])!,
  );
  return specifiers.map((s) => relative(SRC, resolve(dirname(file), s)).replace(/\.js$/, '.ts'));
}

const edges = sourceFiles(SRC).flatMap((file) => importsOf(file).map((to) => ({ from: relative(SRC, file), to })));

test('the import scan sees the edges it must (a check that finds nothing proves nothing)', () => {
  assert.ok(
    edges.some((e) => e.from === 'scan.ts' && e.to.startsWith('collect/')),
    'scan.ts -> collect/',
  );
  assert.ok(
    edges.some((e) => e.from.startsWith('cli/') && e.to === 'pipeline.ts'),
    'cli/ -> pipeline.ts',
  );
});

test('src/collect/ is imported only from src/scan.ts (and from inside src/collect/)', () => {
  const outside = edges.filter(
    (e) => e.to.startsWith('collect/') && !e.from.startsWith('collect/') && e.from !== 'scan.ts',
  );
  assert.equal(outside, []);
});

test('nothing outside src/cli/ imports src/cli/', () => {
  assert.equal(
    edges.filter((e) => e.to.startsWith('cli/') && !e.from.startsWith('cli/')),
    [],
  );
});

test('the pure core (facts, policy, evaluate, report, snapshot) imports no command, collector or pipeline', () => {
  const core = ['facts/', 'policy/', 'evaluate/', 'report/', 'snapshot/'];
  const upward = ['cli/', 'collect/', 'pipeline.ts', 'acquire.ts', 'scan.ts'];
  const bad = edges.filter((e) => core.some((c) => e.from.startsWith(c)) && upward.some((u) => e.to.startsWith(u)));
  assert.equal(bad, []);
});

test('the subject specs (src/subjects/), read by the snapshot and policy layers, import only small helpers', () => {
  const specs = edges.filter((e) => e.from.startsWith('subjects/'));
  assert.ok(specs.length > 0, 'the specs import something');
  assert.equal(
    specs.filter((e) => !e.to.startsWith('subjects/') && e.to !== 'secret/value.ts'),
    [],
  );
});

/**
 * The import cycles of a graph: its strongly connected components of more than one module (or a module that imports
 * itself), each sorted. Tarjan's algorithm, iterative: the graph is the one read above, not read a second time.
 */
function cyclesOf(graph: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of graph) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, index.size);
    low.set(start, index.get(start)!);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const out = next.get(top.node) ?? [];
      if (top.i < out.length) {
        const to = out[top.i++]!;
        if (!index.has(to)) {
          index.set(to, index.size);
          low.set(to, index.get(to)!);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== top.node);
      if (component.length > 1 || out.includes(top.node)) cycles.push(component.sort());
    }
  }
  return cycles;
}

test('the cycle check finds a cycle where there is one (a check that finds nothing proves nothing)', () => {
  assert.equal(
    cyclesOf([
      { from: 'a.ts', to: 'b.ts' },
      { from: 'b.ts', to: 'c.ts' },
      { from: 'c.ts', to: 'a.ts' },
      { from: 'c.ts', to: 'd.ts' },
      { from: 'e.ts', to: 'e.ts' },
    ]),
    [['a.ts', 'b.ts', 'c.ts'], ['e.ts']],
  );
});

test('no import cycle in src/ (static, dynamic and type-only imports alike): each module can be read apart', () => {
  assert.equal(cyclesOf(edges), []);
});

test("src/'s root holds at most ten files: the entry points and the helpers every layer reads (ARCHITECTURE.md)", () => {
  const root = readdirSync(SRC, { withFileTypes: true }).filter((d) => d.isFile());
  assert.ok(root.length > 0, 'src/ has files at its root');
  assert.ok(root.length <= 10, `src/ root holds ${root.length} files: ${root.map((d) => d.name).join(', ')}`);
});

test.run();
