import { closest } from 'fastest-levenshtein';
import { withoutProtocol } from './text/endpoint.js';
import { MeshAuditError } from './errors.js';
import { globMatcher } from './fs/glob.js';
import type { Notification } from './evaluate/finding.js';
import type { Subject, SubjectSets } from './facts/subjects.js';
import type { LedgerEntryData } from './policy/subject-data.js';
import type { Snapshot } from './snapshot/types.js';

/**
 * What a scan looks at. Selectors pick containers (`label:KEY=VALUE`, `label:KEY`, `name:GLOB`), files
 * (`path:GLOB`) and the sockets listening on the host (`listener:GLOB`, matched against `ADDRESS:PORT/PROTOCOL`
 * and `ADDRESS:PORT`); a bare glob starting with `/` is a path, one with `=` a label, any other a name.
 * Subjects left out are counted, never silently dropped.
 */
export type Selector =
  | { kind: 'label'; key: string; value: string | undefined; text: string }
  | { kind: 'name'; glob: string; text: string }
  | { kind: 'path'; glob: string; text: string }
  | { kind: 'listener'; glob: string; text: string };

/** One line of an ignore file (or `ignore:` in config): a selector, until a day (UTC) when given. */
export interface IgnoreEntry {
  selector: Selector;
  /** Last day it holds, `YYYY-MM-DD`; for ever when absent. */
  until?: string;
  /** `file:line` where it is written. */
  source: string;
}

export interface Scope {
  include: Selector[];
  exclude: Selector[];
  ignore: IgnoreEntry[];
}

export const EMPTY_SCOPE: Scope = { include: [], exclude: [], ignore: [] };
export const isEmptyScope = (s: Scope): boolean => s.include.length + s.exclude.length + s.ignore.length === 0;

/** Subjects a scope left out, by kind (a container's sources and mounts go with it). */
export interface Excluded {
  containers: number;
  files: number;
  ledger: number;
  /** Sockets listening on the host (a container's own go with the container). */
  listeners: number;
}

const KINDS = ['label', 'name', 'path', 'listener'] as const;

/** Reads one selector; a mistyped kind is answered with the closest one. */
export function parseSelector(text: string, where: string): Selector {
  const s = text.trim();
  if (s.length === 0) throw new MeshAuditError(`${where}: an empty selector`);
  const prefixed = /^([a-z]+):(.*)$/s.exec(s);
  let kind: string;
  let body: string;
  if (prefixed && !s.startsWith('/')) {
    kind = prefixed[1]!;
    body = prefixed[2]!;
    if (!(KINDS as readonly string[]).includes(kind)) {
      throw new MeshAuditError(
        `${where}: unknown selector kind '${kind}:' in '${s}' (did you mean '${closest(kind, [...KINDS])}:'? known: ` +
          `label:KEY=VALUE, name:GLOB, path:GLOB, listener:ADDRESS:PORT)`,
      );
    }
  } else {
    kind = s.startsWith('/') ? 'path' : s.includes('=') ? 'label' : 'name';
    body = s;
  }
  if (body.length === 0)
    throw new MeshAuditError(`${where}: '${s}' selects nothing (give a ${kind === 'label' ? 'KEY=VALUE' : 'glob'})`);
  if (kind === 'label') {
    const eq = body.indexOf('=');
    const key = eq < 0 ? body : body.slice(0, eq);
    if (key.length === 0) throw new MeshAuditError(`${where}: '${s}' names no label key`);
    return { kind: 'label', key, value: eq < 0 ? undefined : body.slice(eq + 1), text: s };
  }
  if (kind === 'path' && !body.startsWith('/'))
    throw new MeshAuditError(`${where}: a path selector needs an absolute glob, not '${body}'`);
  return { kind: kind as 'name' | 'path' | 'listener', glob: body, text: s };
}

// eslint-disable-next-line regexp/no-super-linear-backtracking -- one line of the operator's ignore file
const UNTIL = /^(.*?)\s+until\s+(\d{4}-\d{2}-\d{2})$/s;

/**
 * An ignore file: one selector a line, `# comments`, optionally ` until YYYY-MM-DD`. Every bad line is reported at
 * once.
 */
export function parseIgnoreFile(text: string, file: string): IgnoreEntry[] {
  const entries: IgnoreEntry[] = [];
  const errors: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (line.length === 0) return;
    const where = `${file}:${i + 1}`;
    try {
      const m = UNTIL.exec(line);
      if (/\suntil(\s|$)/.test(line) && !m) throw new MeshAuditError(`${where}: 'until' needs a day, YYYY-MM-DD`);
      if (m && Number.isNaN(Date.parse(`${m[2]!}T00:00:00Z`)))
        throw new MeshAuditError(`${where}: '${m[2]!}' is not a day`);
      entries.push({ selector: parseSelector(m ? m[1]! : line, where), ...(m ? { until: m[2]! } : {}), source: where });
    } catch (err) {
      if (!(err instanceof MeshAuditError)) throw err;
      errors.push(err.message);
    }
  });
  if (errors.length > 0) throw new MeshAuditError(errors.join('\n'));
  return entries;
}

interface Target {
  name?: string;
  labels?: Record<string, string>;
  path?: string;
  /** A listening socket's `ADDRESS:PORT/PROTOCOL`. */
  endpoint?: string;
}

function selects(sel: Selector, t: Target): boolean {
  switch (sel.kind) {
    case 'label':
      return (
        t.labels !== undefined &&
        Object.hasOwn(t.labels, sel.key) &&
        (sel.value === undefined || globMatcher(sel.value)(t.labels[sel.key]!))
      );
    case 'name':
      return t.name !== undefined && globMatcher(sel.glob)(t.name);
    case 'path':
      return t.path !== undefined && globMatcher(sel.glob)(t.path);
    case 'listener': {
      if (t.endpoint === undefined) return false;
      // Written whole, an IPv6 endpoint's brackets are meant literally (`[::]:22`), not as a glob's class.
      const bare = withoutProtocol(t.endpoint);
      if (sel.glob === t.endpoint || sel.glob === bare) return true;
      const match = globMatcher(sel.glob);
      return match(t.endpoint) || match(bare);
    }
  }
}

const forContainers = (s: Selector) => s.kind === 'label' || s.kind === 'name';

/**
 * `listener:*` left out (excluded, or a live ignore entry) puts every socket on the host out of scope, those
 * that could not be read included: the one explicit way to say the host's listeners are not this audit's
 * business (README, "Scope"). Any other glob speaks of the sockets it matches, so it cannot leave out sockets
 * that were not read.
 */
export const EVERY_LISTENER = 'listener:*';
const selectsEveryListener = (s: Selector): boolean => s.kind === 'listener' && s.glob === '*';
const isLive = (e: IgnoreEntry, now: Date) => e.until === undefined || now.toISOString().slice(0, 10) <= e.until;

/** Whether a container, a container known only by name, or a path is in a scope, on a day. */
export interface ScopeJudge {
  container: (name: string, labels: Record<string, string>) => boolean;
  /** A container known only by name (a ledger target that is absent): a label selector cannot judge it. */
  containerByName: (name: string) => boolean;
  path: (path: string) => boolean;
  /** A socket listening on the host, by its `ADDRESS:PORT/PROTOCOL`. */
  listener: (endpoint: string) => boolean;
  /** Where every socket on the host is put out of scope (`listener:*`, or an ignore entry's `file:line`), or null. */
  everyListenerOut: string | null;
}

/**
 * The one reading of a scope, shared by the collectors (what is out of scope is not read: src/scan.ts)
 * and by applyScope (what is out of scope is not evaluated, and is counted).
 */
export function judgeOf(scope: Scope, now: Date): ScopeJudge {
  const liveIgnores = scope.ignore.filter((e) => isLive(e, now));
  const out = [...scope.exclude, ...liveIgnores.map((e) => e.selector)];
  const everyListenerOut = scope.exclude.some(selectsEveryListener)
    ? `--exclude ${EVERY_LISTENER}`
    : (liveIgnores.find((e) => selectsEveryListener(e.selector))?.source ?? null);
  const containerIncludes = scope.include.filter(forContainers);
  const pathIncludes = scope.include.filter((s) => s.kind === 'path');
  const listenerIncludes = scope.include.filter((s) => s.kind === 'listener');
  const inScope = (t: Target, includes: Selector[], labelsKnown: boolean): boolean => {
    const canJudge = (s: Selector) => s.kind !== 'label' || labelsKnown;
    if (includes.length > 0 && includes.some(canJudge) && !includes.some((s) => canJudge(s) && selects(s, t)))
      return false;
    return !out.some((s) => selects(s, t));
  };
  return {
    container: (name, labels) => inScope({ name, labels }, containerIncludes, true),
    containerByName: (name) => inScope({ name }, containerIncludes, false),
    path: (path) => inScope({ path }, pathIncludes, true),
    listener: (endpoint) => inScope({ endpoint }, listenerIncludes, true),
    everyListenerOut: everyListenerOut === null ? null : `${EVERY_LISTENER} (${everyListenerOut})`,
  };
}

/** The judge the collectors read with: none for an empty scope (everything is read, as without one). */
export const readingScopeOf = (scope: Scope, now: Date): ScopeJudge | undefined =>
  isEmptyScope(scope) ? undefined : judgeOf(scope, now);

/**
 * Leaves out the subjects a scope does not cover (pure). Includes narrow each kind they speak of
 * (container selectors containers, path selectors files); excludes and live ignore entries remove.
 * A ledger entry goes with its target; a label selector cannot judge a container that is absent,
 * so such an entry stays (a missing resource is never hidden by a selector that cannot see it).
 */
export function applyScope(
  subjects: SubjectSets,
  snapshot: Snapshot,
  scope: Scope,
  now: Date,
): {
  subjects: SubjectSets;
  excluded: Excluded;
  outOfScope: { kind: string; id: string }[];
  notifications: Notification[];
  everyHostListenerOut?: boolean;
} {
  const host = snapshot.host.hostname;
  const notifications = expiredIgnoreNotes(scope, now, host);
  if (isEmptyScope(scope))
    return { subjects, excluded: { containers: 0, files: 0, ledger: 0, listeners: 0 }, outOfScope: [], notifications };
  const judge = judgeOf(scope, now);
  const keep = inScopeOf(subjects, snapshot, judge);
  const { filtered, excluded, outOfScope } = leaveOut(subjects, keep);
  // The host's sockets were not read and the scope leaves all of them out: said once, so that no one takes the
  // complete run for one that looked at them.
  const unreadLeftOut = subjects.listeners.find(
    (s) => (s.data as { endpoint?: string }).endpoint === undefined && !keep(s),
  );
  if (unreadLeftOut !== undefined)
    notifications.push({
      host,
      level: 'note',
      kind: 'evaluation',
      source: 'scope',
      subject: 'listeners',
      message:
        `${unreadLeftOut.unknown?.[0]?.reason ?? "the host's listening sockets not read"}; every listener is out of ` +
        `scope by ${judge.everyListenerOut!}: the rules on them were not checked, by that choice`,
    });
  return {
    subjects: filtered,
    excluded,
    outOfScope,
    notifications,
    ...(judge.everyListenerOut !== null ? { everyHostListenerOut: true } : {}),
  };
}

/** A note for each ignore entry past its date: what it selected is checked again. */
function expiredIgnoreNotes(scope: Scope, now: Date, host: string): Notification[] {
  return scope.ignore
    .filter((e) => !isLive(e, now))
    .map((e) => ({
      host,
      level: 'note',
      kind: 'evaluation',
      source: 'ignore',
      subject: e.source,
      message: `ignore entry ${e.source} (${e.selector.text}) expired on ${e.until!}; what it selects is checked again`,
    }));
}

/** Whether a subject is in scope: containers and paths by the judge, a ledger entry with its target, sockets too. */
function inScopeOf(subjects: SubjectSets, snapshot: Snapshot, judge: ScopeJudge): (s: Subject) => boolean {
  const byName = new Map(snapshot.containers.map((c) => [c.name, c] as const));
  const byId = new Map(snapshot.containers.map((c) => [c.id, c] as const));
  const containerIn = new Map<string, boolean>();
  for (const c of snapshot.containers) containerIn.set(c.name, judge.container(c.name, c.labels));
  const pathIn = judge.path;

  const ledgerIn = (s: Subject<LedgerEntryData>): boolean => {
    const { type, target } = s.data;
    if (target === null) return true;
    if (type === 'container') {
      const c = byName.get(target) ?? byId.get(target);
      return c ? containerIn.get(c.name)! : judge.containerByName(target);
    }
    if (type === 'file') return pathIn(target);
    return true;
  };
  const ledgerInScope = new Set<Subject>(subjects.ledger.filter(ledgerIn));
  return (s) => {
    switch (s.about.kind) {
      case 'container':
        return containerIn.get(s.about.id) ?? true;
      case 'file':
        return pathIn(s.about.id);
      case 'ledger-entry':
        return ledgerInScope.has(s);
      case 'listener': {
        // A container's own socket goes with its container; one on the host has its own selectors.
        const data = s.data as { namespace?: string; container?: string | null; endpoint?: string };
        if (data.namespace === 'container') return containerIn.get(data.container ?? '') ?? true;
        // The host's sockets not read (one wholly unknown stand-in, src/facts/host-objects.ts): only `listener:*`
        // can say that whatever they are is out of scope.
        if (data.endpoint === undefined) return judge.everyListenerOut === null;
        return judge.listener(data.endpoint);
      }
      default:
        return true;
    }
  };
}

/** Each set less the subjects out of scope, with how many of each kind went and what they were, in order. */
function leaveOut(
  subjects: SubjectSets,
  keep: (s: Subject) => boolean,
): { filtered: SubjectSets; excluded: Excluded; outOfScope: { kind: string; id: string }[] } {
  const excluded: Excluded = { containers: 0, files: 0, ledger: 0, listeners: 0 };
  const filtered = {} as Record<keyof SubjectSets, Subject[]>;
  const left = new Map<string, { kind: string; id: string }>();
  for (const [set, list] of Object.entries(subjects) as [keyof SubjectSets, Subject[]][]) {
    filtered[set] = list.filter((s) => {
      const kept = keep(s);
      if (!kept) {
        const key = `${s.about.kind}\u0000${s.about.id}`;
        if (!left.has(key)) left.set(key, { ...s.about });
        if (set === 'containers') excluded.containers++;
        else if (set === 'files') excluded.files++;
        else if (set === 'ledger') excluded.ledger++;
        else if (set === 'listeners') excluded.listeners++;
      }
      return kept;
    });
  }
  const outOfScope = [...left.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, about]) => about);
  // Each set only filtered: its subjects keep their set's type.
  return { filtered: filtered as unknown as SubjectSets, excluded, outOfScope };
}
