import { pathToFileURL } from 'node:url';
import type { Finding } from '../evaluate/finding.js';
import type { Severity } from '../policy/types.js';
import type { Report } from './report.js';

/** Versioned key of our partialFingerprints entry (PITFALLS: never fill `fingerprints`). */
export const FINGERPRINT_KEY = 'meshAuditFinding/v1';

/** Markdown help as plain text: emphasis and code marks dropped, paragraphs kept. */
const plainText = (markdown: string): string => markdown.trim().replace(/\*\*([^*]+)\*\*/g, '$1').replace(/`([^`]+)`/g, '$1');

const level = (s: Severity): 'error' | 'warning' | 'note' => s;

function result(finding: Finding, ruleIndex: number, report: Report) {
  const physical = finding.locations.physical.map((p) => ({
    physicalLocation: {
      artifactLocation: { uri: pathToFileURL(p.path).href },
      ...(p.line !== undefined ? { region: { startLine: p.line } } : {}),
    },
  }));
  const logical = finding.locations.logical.map((l) => ({ name: l.name, fullyQualifiedName: l.fullyQualifiedName, kind: 'resource' }));
  // The first location carries the logical ones too; a result with no file still has a location.
  const locations =
    physical.length > 0
      ? physical.map((loc, i) => (i === 0 && logical.length > 0 ? { ...loc, logicalLocations: logical } : loc))
      : logical.length > 0
        ? [{ logicalLocations: logical }]
        : [];
  return {
    ruleId: finding.ruleId,
    ...(ruleIndex >= 0 ? { ruleIndex } : {}),
    level: level(finding.severity),
    message: { text: finding.message },
    ...(locations.length > 0 ? { locations } : {}),
    partialFingerprints: { [FINGERPRINT_KEY]: finding.fingerprint },
    // On every result of the run or on none (PITFALLS, SARIF).
    ...(report.baseline ? { baselineState: finding.state ?? 'new' } : {}),
    ...(report.waivers ? { suppressions: suppressionsOf(finding) } : {}),
    properties: { subject: finding.subject, ...(finding.discriminator !== null ? { discriminator: finding.discriminator } : {}) },
  };
}

/** `[]` means checked and not suppressed; SARIF has no expiry field, so it goes in properties. */
function suppressionsOf(finding: Finding) {
  if (!finding.suppressed) return [];
  return [
    {
      kind: 'external',
      status: 'accepted',
      justification: finding.suppressed.justification,
      properties: { expires: finding.suppressed.expires, waiver: finding.suppressed.waiver },
    },
  ];
}

/** SARIF 2.1.0: one run per host, rule metadata from the packs, one notification per thing not checked. */
export function renderSarif(report: Report): string {
  const rules = [...report.rules].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const ruleIndex = new Map(rules.map((r, i) => [r.id, i]));
  const driver = {
    name: report.tool.name,
    version: report.tool.version,
    semanticVersion: report.tool.version,
    informationUri: report.tool.uri,
    rules: rules.map((r) => ({
      id: r.id,
      name: r.name,
      shortDescription: { text: r.title },
      fullDescription: { text: r.help.split('\n\n')[0]!.replace(/\s*\n\s*/g, ' ').trim() },
      help: { text: plainText(r.help), markdown: r.help.trim() },
      ...(r.helpUri !== undefined ? { helpUri: r.helpUri } : {}),
      defaultConfiguration: { level: level(r.severity) },
      properties: { tags: r.tags, profiles: r.profiles, pack: r.pack },
    })),
  };
  const doc = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: report.evaluations.map((e) => ({
      tool: { driver },
      automationDetails: { id: `mesh-audit/${e.host}/` },
      invocations: [
        {
          executionSuccessful: e.complete,
          endTimeUtc: report.generatedAt,
          toolExecutionNotifications: e.notifications.map((n) => ({
            level: n.level,
            message: { text: n.message },
            ...(n.kind === 'evaluation' && ruleIndex.has(n.source)
              ? { associatedRule: { id: n.source, index: ruleIndex.get(n.source)! } }
              : {}),
            properties: { kind: n.kind, source: n.source, ...(n.subject !== undefined ? { subject: n.subject } : {}) },
          })),
        },
      ],
      properties: { host: e.host, snapshotTakenAt: e.takenAt, ...(e.excluded ? { excludedByScope: e.excluded } : {}) },
      results: [...e.findings, ...(report.baseline?.absent ?? []).filter((f) => f.host === e.host)].map((f) =>
        result(f, ruleIndex.get(f.ruleId) ?? -1, report),
      ),
    })),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}
