import { pathToFileURL } from 'node:url';
import type { Evaluation, Finding, Notification } from '../evaluate/finding.js';
import type { LoadedRule, Severity } from '../policy/types.js';
import { carriedFindings, type Report } from './report.js';
import {
  benchmarkOf,
  helpUriOf,
  helpWithRemediation,
  isSecurityRule,
  plainText,
  SECURITY_SEVERITY,
  summaryOf,
  worstSeverity,
} from './rule-docs.js';

/** Versioned key of our partialFingerprints entry (ARCHITECTURE.md, Pitfalls: never fill `fingerprints`). */
export const FINGERPRINT_KEY = 'meshAuditFinding/v1';

/**
 * Every file is a URI relative to this base, declared in `originalUriBaseIds` as the host's root
 * (`file:///`): consumers that want relative locations (GitHub code scanning refuses absolute `file:`
 * URIs, GH1006) get them, and the host path is still one join away.
 */
export const HOST_ROOT = 'HOSTROOT';

/** Where the ledger is by default: the per-host artifact when a snapshot did not say (an old one). */
const DEFAULT_LEDGER = '/var/lib/mesh-host/ledger.json';

/** GitHub code scanning takes at most 20 runs in one file (GH1004); a fleet is written one file per host. */
export const MAX_RUNS_PER_FILE = 20;

const level = (s: Severity): 'error' | 'warning' | 'note' => s;

/** `/etc/mesh/a b.env` -> `etc/mesh/a%20b.env`: percent-encoded as a URI, relative to HOSTROOT. */
const relativeUri = (path: string): string => pathToFileURL(path).href.replace(/^file:\/\/\//, '');

function physicalLocation(path: string, line: number | undefined) {
  // Whole-file findings start at line 1: consumers want a region (GitHub: GH1003).
  return { artifactLocation: { uri: relativeUri(path), uriBaseId: HOST_ROOT }, region: { startLine: line ?? 1 } };
}

/**
 * Every result has a physical location. A container, port or ledger entry is located at its ledger
 * entry's line (each subject builder's `locate`, e.g. src/facts/containers.ts); what has no entry and
 * no file (an unclaimed container, the host) at the top of the host's ledger — the record that does
 * not claim it — with its logical location kept.
 */
function locationsOf(finding: Finding, ledgerPath: string) {
  const logical = finding.locations.logical.map((l) => ({
    name: l.name,
    fullyQualifiedName: l.fullyQualifiedName,
    kind: 'resource',
  }));
  const physical = finding.locations.physical.length > 0 ? finding.locations.physical : [{ path: ledgerPath, line: 1 }];
  return physical.map((p, i) => ({
    physicalLocation: physicalLocation(p.path, p.line),
    ...(i === 0 && logical.length > 0 ? { logicalLocations: logical } : {}),
  }));
}

interface RunOptions {
  baseline: boolean;
  /** This run holds the waived results: each has a suppression (and no other run has any). */
  waived: boolean;
  /** Fingerprints of findings carried forward unchecked from the baseline (their facts were not read). */
  carried?: ReadonlySet<string>;
}

function result(finding: Finding, ruleIndex: number, ledgerPath: string, options: RunOptions) {
  // A finding gone since the baseline is no problem any more: a pass, level none; its severity is kept.
  const absent = finding.state === 'absent';
  const carried = options.carried?.has(finding.fingerprint) === true;
  return {
    ruleId: finding.ruleId,
    ...(ruleIndex >= 0 ? { ruleIndex } : {}),
    ...(absent ? { kind: 'pass', level: 'none' } : { kind: 'fail', level: level(finding.severity) }),
    message: { text: finding.message },
    locations: locationsOf(finding, ledgerPath),
    partialFingerprints: { [FINGERPRINT_KEY]: finding.fingerprint },
    // On every result of the run or on none (SARIF 3.27.23; ARCHITECTURE.md, Pitfalls).
    ...(options.baseline ? { baselineState: finding.state ?? 'new' } : {}),
    ...(options.waived && finding.suppressed ? { suppressions: [suppressionOf(finding.suppressed)] } : {}),
    properties: {
      subject: finding.subject,
      severity: finding.severity,
      ...(finding.discriminator !== null ? { discriminator: finding.discriminator } : {}),
      ...(finding.module !== undefined ? { module: finding.module } : {}),
      ...(finding.resource !== undefined ? { resource: finding.resource } : {}),
      ...(finding.firstSeen !== undefined ? { firstSeen: finding.firstSeen } : {}),
      ...(carried ? { notCheckedThisRun: true } : {}),
      ...(finding.unknownEscalation !== undefined ? { unknownEscalation: finding.unknownEscalation } : {}),
    },
  };
}

/** SARIF has no expiry field, so it goes in properties; a ledger allowance names its entry there. */
const suppressionOf = (s: NonNullable<Finding['suppressed']>) => ({
  kind: 'external',
  status: 'accepted',
  justification: s.justification,
  properties: 'expires' in s ? { expires: s.expires, waiver: s.waiver } : { allowedBy: s.allowedBy },
});

/** The notification's text names what was not checked, so it reads alone (a list of EACCES says nothing). */
function notificationText(n: Notification): string {
  const subject = n.subject ?? n.source;
  return n.message.includes(subject) ? n.message : `${subject}: ${n.message}`;
}

function ruleDescriptor(r: LoadedRule, docsUrl: string) {
  const security = isSecurityRule(r);
  const benchmark = benchmarkOf(r);
  return {
    id: r.id,
    name: r.name,
    shortDescription: { text: r.title },
    fullDescription: { text: summaryOf(r) },
    help: { text: plainText(helpWithRemediation(r)), markdown: helpWithRemediation(r) },
    // Only a real page: a rule of one's own pack without `helpUri` has none (its help is here whole).
    ...(helpUriOf(r, docsUrl) !== undefined ? { helpUri: helpUriOf(r, docsUrl) } : {}),
    defaultConfiguration: { level: level(r.severity) },
    properties: {
      tags: security ? [...new Set([...r.tags, 'security'])] : r.tags,
      ...(security ? { 'security-severity': SECURITY_SEVERITY[worstSeverity(r)] } : {}),
      profiles: r.profiles,
      pack: r.pack,
      // The CIS recommendation it implements (docker-hardening): id, level, automated or manual.
      ...(benchmark ? { cis: benchmark } : {}),
    },
  };
}

/** One host's evaluation: one run, or two when waivers matched (see `renderSarifRuns`). */
interface HostRuns {
  host: string;
  runs: unknown[];
}

/**
 * The runs of each host, in report order. SARIF wants `suppressions` on every result of a run or on
 * none, and converters (sarif-to-markdown) list every result that has the property, even empty, as
 * suppressed: so the results a waiver matched go into a run of their own, `mesh-audit/HOST/waived/`,
 * where each has its suppression, and the host's main run has none.
 */
function hostRuns(report: Report): HostRuns[] {
  const rules = [...report.rules].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const ruleIndex = new Map(rules.map((r, i) => [r.id, i]));
  const driver = {
    name: report.tool.name,
    version: report.tool.version,
    semanticVersion: report.tool.version,
    informationUri: report.tool.uri,
    rules: rules.map((r) => ruleDescriptor(r, report.docsUrl)),
  };
  const startTimeUtc = new Date(
    Date.parse(report.generatedAt) - Math.round(report.durationSeconds * 1000),
  ).toISOString();
  const seen = new Map<string, number>();
  const byHost = new Map<string, HostRuns>();
  for (const e of report.evaluations) {
    const n = (seen.get(e.host) ?? 0) + 1;
    seen.set(e.host, n);
    // The same host twice in one report: each run keeps a category of its own.
    const category = n === 1 ? `mesh-audit/${e.host}/` : `mesh-audit/${e.host}/${n}/`;
    const ledgerPath = e.ledgerPath ?? DEFAULT_LEDGER;
    // Findings carried forward unchecked stay results (a result missing from an upload closes the
    // code-scanning alert): what was not read tonight is not gone.
    const carried = n === 1 ? carriedFindings(report).filter((f) => f.host === e.host) : [];
    const all = [
      ...e.findings,
      ...carried,
      ...(n === 1 ? (report.baseline?.absent ?? []).filter((f) => f.host === e.host) : []),
    ];
    const waived = all.filter((f) => f.suppressed !== undefined);
    const run = (id: string, findings: Finding[], options: RunOptions, notifications: Notification[]) => ({
      tool: { driver },
      automationDetails: { id },
      originalUriBaseIds: {
        [HOST_ROOT]: {
          uri: 'file:///',
          description: { text: `The root folder of host ${e.host}: every path is the host's own.` },
        },
      },
      invocations: [
        invocationOf(e, notifications, ruleIndex, startTimeUtc, report.generatedAt, report.policy?.skipped ?? []),
      ],
      properties: {
        host: e.host,
        snapshotTakenAt: e.takenAt,
        ...(report.policy ? { policy: report.policy } : {}),
        ...(e.excluded ? { excludedByScope: e.excluded } : {}),
        ...(options.waived ? { waived: true } : {}),
      },
      results: findings.map((f) => result(f, ruleIndex.get(f.ruleId) ?? -1, ledgerPath, options)),
    });
    const baseline = report.baseline !== undefined;
    const carriedFps = new Set(carried.map((f) => f.fingerprint));
    const runs: unknown[] = [
      run(
        category,
        all.filter((f) => f.suppressed === undefined),
        { baseline, waived: false, carried: carriedFps },
        e.notifications,
      ),
    ];
    if (waived.length > 0)
      runs.push(run(`${category}waived/`, waived, { baseline, waived: true, carried: carriedFps }, []));
    const entry = byHost.get(e.host) ?? { host: e.host, runs: [] };
    entry.runs.push(...runs);
    byHost.set(e.host, entry);
  }
  return [...byHost.values()];
}

function invocationOf(
  e: Evaluation,
  notifications: Notification[],
  ruleIndex: Map<string, number>,
  startTimeUtc: string,
  endTimeUtc: string,
  skipped: readonly string[],
) {
  return {
    executionSuccessful: e.complete,
    startTimeUtc,
    endTimeUtc,
    // SARIF 2.1.0 §3.20.22: conditions of the tool's configuration. A rule skipped on purpose is one (a note: the run
    // is no less complete); it is not among the driver's rules, so it is referred to by id alone.
    ...(skipped.length > 0
      ? {
          toolConfigurationNotifications: skipped.map((id) => ({
            level: 'note',
            message: { text: `rule ${id} skipped by configuration (skip): not evaluated` },
            associatedRule: { id },
            properties: { kind: 'configuration', source: 'skip' },
          })),
        }
      : {}),
    toolExecutionNotifications: notifications.map((n) => ({
      level: n.level,
      message: { text: notificationText(n) },
      ...(n.kind === 'evaluation' && ruleIndex.has(n.source)
        ? { associatedRule: { id: n.source, index: ruleIndex.get(n.source)! } }
        : {}),
      properties: { kind: n.kind, source: n.source, ...(n.subject !== undefined ? { subject: n.subject } : {}) },
    })),
  };
}

const document = (runs: unknown[]): string =>
  JSON.stringify({ $schema: 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0', runs }, null, 2) + '\n';

/** SARIF 2.1.0, every run in one document (stdout, a single host). */
export function renderSarif(report: Report): string {
  return document(hostRuns(report).flatMap((h) => h.runs));
}

/** `a.b-c_d` stays; anything else in a host name becomes `_` (it is part of a file name). */
const safeName = (host: string): string => host.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');

/**
 * The SARIF files of a report: `mesh-audit.sarif` for one host; for a fleet one file per host,
 * `mesh-audit.HOST.sarif` (GitHub takes at most 20 runs a file, and each host is its own category).
 */
export function renderSarifFiles(report: Report, baseName = 'mesh-audit'): { name: string; content: string }[] {
  const hosts = hostRuns(report);
  if (hosts.length <= 1) return [{ name: `${baseName}.sarif`, content: document(hosts.flatMap((h) => h.runs)) }];
  const used = new Set<string>();
  return hosts.map((h) => {
    let name = `${baseName}.${safeName(h.host)}.sarif`;
    for (let n = 2; used.has(name); n++) name = `${baseName}.${safeName(h.host)}-${n}.sarif`;
    used.add(name);
    return { name, content: document(h.runs) };
  });
}
