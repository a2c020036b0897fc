/*
 * How deep a document read from the host or given by an operator may nest. JSON.parse and the yaml
 * package build any depth, but every walk over the result that recurses (Ajv's validators of a
 * recursive schema, JSON.stringify, structuredClone, the secret-safe value makers, JSON Logic) ends in
 * "Maximum call stack size exceeded" a few thousand levels down (Ajv on a snapshot: between 1,000 and
 * 3,000). So each reader measures the depth here, without recursion, before anything else walks it,
 * and refuses a deeper document as that document's problem.
 */

/**
 * The deepest a document may nest, counting objects and arrays (YAML mappings and sequences): `{}` is 1,
 * `{"a": [1]}` is 2. No real document comes near it: Docker's documented daemon.json nests 6 levels
 * (`builder.gc.policy[].filter[]`), a ledger 3 plus its entries' own fields (kept to 32 more,
 * src/collect/ledger-entries.ts), the deepest shipped pack 17 (policies/docker-hardening/HD2-daemon.yaml),
 * an example snapshot 7 (measured over every JSON and YAML file of the repository). And it is far enough
 * below the ~1,000 levels where the first recursive walk failed that every walk over a document stays shallow.
 */
export const MAX_DEPTH = 64;

/**
 * A snapshot (and what is made of snapshots: the history's index, a report) holds host documents such as
 * daemon.json, each up to MAX_DEPTH deep, inside a frame of its own of a few levels: it may nest
 * MAX_DEPTH more than they do.
 */
export const MAX_SNAPSHOT_DEPTH = 2 * MAX_DEPTH;

/** A node of a tree and how to reach its children: `[key or index, child]`, or none for a leaf. */
export type ChildrenOf<T> = (node: T) => Iterable<readonly [string | number, T]> | undefined;

/** The first node (in document order) nested deeper than `limit`, and its path from the root. */
export interface TooDeep<T> {
  node: T;
  path: (string | number)[];
}

/**
 * The first node that lies deeper than `limit` containers (the root container is at depth 1), or null
 * when the tree is within the limit. A loop with a stack of its own, so any depth is measured; it stops
 * at the first node too deep, and makes a path only for that one.
 */
export function firstTooDeep<T>(root: T, childrenOf: ChildrenOf<T>, limit: number = MAX_DEPTH): TooDeep<T> | null {
  interface Step {
    node: T;
    key: string | number;
    parent: Step | null;
    depth: number;
  }
  const pending: Step[] = [{ node: root, key: '', parent: null, depth: 1 }];
  for (let step = pending.pop(); step !== undefined; step = pending.pop()) {
    const children = childrenOf(step.node);
    if (children === undefined) continue;
    if (step.depth > limit) {
      const path: (string | number)[] = [];
      for (let s: Step = step; s.parent !== null; s = s.parent) path.push(s.key);
      return { node: step.node, path: path.reverse() };
    }
    // Pushed in reverse, so that the first child is walked first: the node reported is the first in the text.
    const list = [...children];
    for (let i = list.length - 1; i >= 0; i--)
      pending.push({ node: list[i]![1], key: list[i]![0], parent: step, depth: step.depth + 1 });
  }
  return null;
}

/** The children of a value JSON.parse (or YAML's toJS) made: an array's items, an object's own members. */
export const jsonChildren: ChildrenOf<unknown> = (value) => {
  if (Array.isArray(value)) return value.map((v, i) => [i, v] as const);
  if (value !== null && typeof value === 'object') return Object.entries(value);
  return undefined;
};

/**
 * The path of the first array or object nested deeper than `limit` inside `value`, or null. Every snapshot
 * loaded is measured, so the common case (within the limit) is a loop that makes nothing but its stack;
 * only a value found too deep is walked again, by firstTooDeep, for its path.
 */
export function pathTooDeep(value: unknown, limit: number = MAX_DEPTH): (string | number)[] | null {
  if (value === null || typeof value !== 'object') return null;
  const containers: object[] = [value];
  const depths: number[] = [1];
  for (let node = containers.pop(); node !== undefined; node = containers.pop()) {
    const depth = depths.pop()!;
    if (depth > limit) return firstTooDeep(value, jsonChildren, limit)!.path;
    if (Array.isArray(node)) {
      for (const child of node as unknown[]) {
        if (child === null || typeof child !== 'object') continue;
        containers.push(child);
        depths.push(depth + 1);
      }
      continue;
    }
    // for…in, not Object.values: no list made per object (a large snapshot has hundreds of thousands).
    for (const key in node) {
      const child = (node as Record<string, unknown>)[key];
      if (child === null || typeof child !== 'object' || !Object.hasOwn(node, key)) continue;
      containers.push(child);
      depths.push(depth + 1);
    }
  }
  return null;
}

/** `/a/0/b`: a path as a JSON Pointer, for a message. */
export const pointerOf = (path: readonly (string | number)[]): string =>
  path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('') || '(root)';

/**
 * The children of a node of a document the yaml package parsed (before toJS, which recurses): a sequence's
 * items, a mapping's keys when they are collections themselves and its values. `y` is the yaml package,
 * loaded by the caller when it parses.
 */
export function yamlChildren(y: typeof import('yaml')): ChildrenOf<unknown> {
  return (node) => {
    if (y.isSeq(node)) return node.items.map((item, i) => [i, item] as const);
    if (!y.isMap(node)) return undefined;
    return node.items.flatMap((pair, i) => {
      const key = y.isScalar(pair.key) ? String(pair.key.value) : i;
      return [...(y.isCollection(pair.key) ? [[i, pair.key] as const] : []), [key, pair.value] as const];
    });
  };
}

/** Where (the offset) the first YAML collection nested deeper than `limit` starts in a parsed document, or null. */
export function yamlTooDeep(y: typeof import('yaml'), doc: import('yaml').Document, limit: number = MAX_DEPTH) {
  const found = firstTooDeep<unknown>(doc.contents, yamlChildren(y), limit);
  if (found === null) return null;
  return y.isNode(found.node) && found.node.range ? found.node.range[0] : 0;
}
