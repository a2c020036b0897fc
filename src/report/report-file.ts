import { MeshAuditError } from '../errors.js';
import { MAX_SNAPSHOT_DEPTH } from '../input/depth.js';
import { parseJsonInput } from '../input/json.js';
import { readInput } from '../input/read.js';
import { validatorFor } from '../input/validate.js';
import type { BaselineFinding } from './baseline.js';
import { JSON_REPORT_SCHEMA } from './json.js';

export const reportSchema = {
  type: 'object',
  required: ['schemaVersion', 'generatedAt', 'findings'],
  properties: {
    schemaVersion: { const: JSON_REPORT_SCHEMA },
    generatedAt: { type: 'string' },
    findings: {
      type: 'array',
      items: {
        type: 'object',
        required: ['host', 'ruleId', 'ruleName', 'severity', 'fingerprint', 'subject', 'message'],
        properties: {
          host: { type: 'string' },
          ruleId: { type: 'string' },
          ruleName: { type: 'string' },
          severity: { enum: ['error', 'warning', 'note'] },
          fingerprint: { type: 'string', minLength: 1 },
          subject: {
            type: 'object',
            required: ['kind', 'id'],
            properties: { kind: { type: 'string' }, id: { type: 'string' } },
          },
          message: { type: 'string' },
        },
      },
    },
  },
} as const;
const validateReport = validatorFor('report', reportSchema);

export interface ReportFile {
  source: string;
  generatedAt: string;
  findings: BaselineFinding[];
  /** What the run did not look at, when the report says (older reports do not): rules not run, hosts not read whole. */
  coverage?: { rulesRun?: ReadonlySet<string>; incompleteHosts: ReadonlySet<string> };
}

/** A JSON report of mesh-audit read back (a baseline, a side of `diff`); a wrong file is exit 2. */
export async function loadReportFile(path: string): Promise<ReportFile> {
  const json = parseJsonInput(await readInput(path, 'report'), path, 'report', MAX_SNAPSHOT_DEPTH);
  if (!validateReport(json)) {
    const e = validateReport.errors![0]!;
    throw new MeshAuditError(
      `${path}: not a mesh-audit JSON report (${JSON_REPORT_SCHEMA}): ${e.instancePath || '(root)'} ` +
        (e.message ?? 'is invalid'),
    );
  }
  const doc = json as {
    generatedAt: string;
    findings: BaselineFinding[];
    notCheckedFindings?: BaselineFinding[];
    policy?: { rulesRun?: unknown };
    hosts?: unknown;
  };
  // Findings the earlier run carried forward without checking them are still its standing findings.
  const carried = Array.isArray(doc.notCheckedFindings)
    ? // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- entries are not checked one by one
      doc.notCheckedFindings.filter((f) => typeof f?.fingerprint === 'string')
    : [];
  const rulesRun = Array.isArray(doc.policy?.rulesRun)
    ? new Set(doc.policy.rulesRun.filter((r): r is string => typeof r === 'string'))
    : undefined;
  const hosts = Array.isArray(doc.hosts) ? (doc.hosts as { hostname?: unknown; complete?: unknown }[]) : [];
  const incompleteHosts = new Set(
    hosts.filter((h) => h.complete === false && typeof h.hostname === 'string').map((h) => h.hostname as string),
  );
  return {
    source: path,
    generatedAt: doc.generatedAt,
    coverage: { ...(rulesRun ? { rulesRun } : {}), incompleteHosts },
    findings: [...doc.findings, ...carried].map((f) => ({
      ...f,
      discriminator: f.discriminator ?? null,
      // An older or hand-edited report may lack the field, whatever its type says.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
      locations: f.locations ?? { physical: [], logical: [] },
    })),
  };
}

/**
 * The previous JSON report of an output folder (`--baseline auto`), given the path write/runs.ts found
 * (the newest complete run that has one), or null on a first run.
 */
export async function previousReport(path: string | null): Promise<ReportFile | null> {
  return path === null ? null : loadReportFile(path);
}
