import { createRequire } from 'node:module';
import type { Evaluation, Finding } from '../evaluate/finding.js';
import type { LoadedRule } from '../policy/types.js';
import type { Report } from './report.js';
import { moreAbout, remediationOf } from './rule-docs.js';
import { suppressionText } from './waivers.js';

// xmlbuilder2 costs ~90 ms to load: only a run that asks for JUnit loads it. Written exactly so: the
// bundler of the single executable follows this form (scripts/package/bundle.ts).
const require = createRequire(import.meta.url);
const xmlbuilder2 = (): typeof import('xmlbuilder2') => require('xmlbuilder2') as typeof import('xmlbuilder2');

/**
 * JUnit XML, as CI servers and InSpec/Goss users read it: one test suite per host, one test case per
 * rule and subject it checked (class name: the rule; name: the subject), a `failure` per finding, and
 * a `skipped` test case for each thing not checked — a rule that failed on a subject, a source that
 * could not be read — and for each rule the `skip` setting turned off. A waived finding is a pass that
 * says so. Checked against the Jenkins JUnit schema (test/fixtures/junit/jenkins-junit.xsd).
 *
 * Built with xmlbuilder2 rather than by hand: names and messages come from the host (container names,
 * paths, env keys) and must be escaped for attributes and text alike, and characters XML 1.0 cannot
 * hold at all (control characters) replaced — the library does both, tested by its authors.
 */
export function renderJunit(report: Report): string {
  const rules = new Map(report.rules.map((r) => [r.id, r]));
  const skippedRules = report.policy?.skipped ?? [];
  const suites = report.evaluations.map((e) => suiteOf(e, rules, report.docsUrl, skippedRules));
  const total = (key: 'tests' | 'failures' | 'skipped') => suites.reduce((n, s) => n + s[key], 0);
  const doc = xmlbuilder2().create({ version: '1.0', encoding: 'UTF-8', invalidCharReplacement: '\uFFFD' });
  const root = doc.ele('testsuites', {
    name: report.tool.name,
    tests: String(total('tests')),
    failures: String(total('failures')),
    errors: '0',
    time: String(report.durationSeconds),
  });
  for (const s of suites) {
    const suite = root.ele('testsuite', {
      name: `${report.tool.name} ${s.host}`,
      tests: String(s.tests),
      failures: String(s.failures),
      errors: '0',
      skipped: String(s.skipped),
      timestamp: s.takenAt,
      hostname: s.host,
    });
    for (const c of s.cases) {
      const testcase = suite.ele('testcase', { classname: c.classname, name: c.name });
      if (c.skipped !== undefined) testcase.ele('skipped').txt(c.skipped);
      for (const f of c.failures) testcase.ele('failure', { type: f.type, message: f.message }).txt(f.text);
      if (c.out !== undefined) testcase.ele('system-out').txt(c.out);
    }
  }
  return doc.end({ prettyPrint: true }) + '\n';
}

interface Case {
  classname: string;
  name: string;
  failures: { type: string; message: string; text: string }[];
  skipped?: string;
  out?: string;
}

function suiteOf(e: Evaluation, rules: Map<string, LoadedRule>, docsUrl: string, skippedRules: readonly string[]) {
  const className = (ruleId: string) => `${ruleId} ${rules.get(ruleId)?.name ?? ''}`.trim();
  const byFingerprint = new Map(e.findings.map((f) => [f.fingerprint, f]));
  const inCases = new Set<string>();
  const cases: Case[] = [];
  const caseOf = (classname: string, name: string, findings: Finding[]): Case => {
    const standing = findings.filter((f) => f.suppressed === undefined);
    const waived = findings.filter((f) => f.suppressed !== undefined);
    return {
      classname,
      name,
      failures: standing.map((f) => failureOf(f, rules.get(f.ruleId), docsUrl)),
      ...(waived.length > 0
        ? {
            out: waived
              .map((f) => `${suppressionText(f.suppressed!)} (${f.suppressed!.justification}): ${f.message}`)
              .join('\n'),
          }
        : {}),
    };
  };
  for (const check of e.checks ?? []) {
    const findings = check.fingerprints.flatMap((fp) => byFingerprint.get(fp) ?? []);
    for (const f of findings) inCases.add(f.fingerprint);
    cases.push(caseOf(className(check.ruleId), check.subject, findings));
  }
  // Findings no check holds (built-in rules such as waiver-expired, or a report made without checks).
  for (const f of e.findings)
    if (!inCases.has(f.fingerprint)) cases.push(caseOf(className(f.ruleId), `${f.subject.kind} ${f.subject.id}`, [f]));
  for (const n of e.notifications.filter((x) => x.level === 'error')) {
    const classname = n.kind === 'evaluation' ? className(n.source) : `not checked: ${n.source}`;
    cases.push({ classname, name: n.subject ?? n.source, failures: [], skipped: n.message });
  }
  // A rule turned off on purpose (the `skip` setting) is a test skipped, as a test runner's own skip is.
  for (const id of skippedRules)
    cases.push({
      classname: id,
      name: 'skipped by configuration',
      failures: [],
      skipped: `rule ${id} skipped by configuration (skip): not evaluated`,
    });
  return {
    host: e.host,
    takenAt: e.takenAt,
    cases,
    tests: cases.length,
    failures: cases.filter((c) => c.failures.length > 0).length,
    skipped: cases.filter((c) => c.skipped !== undefined).length,
  };
}

function failureOf(f: Finding, rule: LoadedRule | undefined, docsUrl: string) {
  const remediation = rule ? remediationOf(rule) : '';
  const text = [
    f.message,
    remediation ? `Remediation: ${remediation}` : null,
    rule ? `More: ${moreAbout(rule, docsUrl)}` : null,
    `Fingerprint: ${f.fingerprint}`,
  ].filter((l) => l !== null);
  return { type: f.severity, message: f.message, text: text.join('\n') };
}
