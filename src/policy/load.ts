import { hash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { readInput } from '../input/read.js';
import { lineAt, parseYaml } from '../input/yaml.js';
import { validatorFor, type Validator } from '../validate.js';
import { MeshAuditError } from '../errors.js';
import { EMBEDDED } from '../embedded.js';
import { packageFile, readPackageText } from '../paths.js';
import { SUBJECT_FIELDS } from './fields.js';
import { unknownFieldReads } from './field-check.js';
import { withSubjectSets } from './pack-schema.js';
import { checkLogic } from './logic.js';
import { placeholders } from './template.js';
import type { LoadedRule, PolicyPack, Rule } from './types.js';

/** How the single executable names the pack it carries inside (not a file: the text is read from EMBEDDED). */
export const EMBEDDED_POLICY_PATH = '<built-in>/policies/mesh-core.yaml';
/** The shipped pack. */
export const DEFAULT_POLICY = EMBEDDED ? EMBEDDED_POLICY_PATH : packageFile('policies', 'mesh-core.yaml');

const require = createRequire(import.meta.url);

/** Where `npm run build` writes the bundled pack already loaded (scripts/precompile.ts). */
export const PRECOMPILED_PACK = '../generated/bundled-pack.json';

/** The bundled pack as loadPolicyFile gives it, with the fingerprint of the YAML text it came from. */
export interface PrecompiledPack {
  fingerprint: string;
  pack: PolicyPack['pack'];
  rules: Array<Omit<LoadedRule, 'source'> & { line: number }>;
}

export const packFingerprint = (text: string): string => hash('sha256', text, 'hex');

/**
 * The bundled pack loaded at build time, when its text is still the one it was built from: parsing
 * and checking the YAML took ~60 ms of every command (yaml's import included). Any other pack, or a
 * bundled pack edited since the build, is loaded from its text.
 */
function precompiled(file: string, text: string): PolicyPack | undefined {
  if (file !== DEFAULT_POLICY) return undefined;
  let ready: PrecompiledPack;
  try {
    // PRECOMPILED_PACK written out: a bundler includes only what a literal require names (dist/program).
    ready = (EMBEDDED?.bundledPack ?? require('../generated/bundled-pack.json')) as PrecompiledPack;
  } catch {
    return undefined; // not built (tsc alone)
  }
  if (ready.fingerprint !== packFingerprint(text)) return undefined;
  return {
    file,
    pack: ready.pack,
    rules: ready.rules.map(({ line, ...rule }) => ({ ...rule, source: { file, line } })),
  };
}

/**
 * The JSON Schema of a policy pack, shipped beside the pack (editors use it too), its `subject` enum
 * made from the registry of subject sets (pack-schema.ts).
 */
export async function readPolicySchema(): Promise<object> {
  return withSubjectSets(JSON.parse(await readPackageText('policies/policy.schema.json')) as object);
}

let validatePack: Validator<unknown> | undefined;
async function packValidator() {
  if (!validatePack) {
    validatePack = validatorFor('policy', await readPolicySchema());
  }
  return validatePack;
}

function ruleIdAt(value: unknown, pointer: string): string | undefined {
  const m = /^\/rules\/(\d+)/.exec(pointer);
  if (!m) return undefined;
  const rule = (value as { rules?: { id?: unknown }[] }).rules?.[Number(m[1])];
  return typeof rule?.id === 'string' ? rule.id : `#${Number(m[1]) + 1}`;
}

function fail(file: string, line: number, ruleId: string | undefined, message: string): never {
  throw new MeshAuditError(`${file}:${line}: ${ruleId ? `rule ${ruleId}: ` : ''}${message}`);
}

export async function loadPolicyFile(file: string): Promise<PolicyPack> {
  const text =
    (file === DEFAULT_POLICY ? EMBEDDED?.files['policies/mesh-core.yaml'] : undefined) ??
    (await readInput(file, 'policy'));
  const pack = precompiled(file, text) ?? (await parsePolicyPack(file, text));
  // The shipped pack's rules are documented in the README (their default link); no other pack's are.
  return file === DEFAULT_POLICY
    ? { ...pack, shipped: true, rules: pack.rules.map((r) => ({ ...r, shipped: true })) }
    : pack;
}

/**
 * A pack from its YAML text: parsed, validated and checked, every problem with its file:line.
 * `checkFields: false` leaves out the check of the fields rules read against their subject set: only
 * for expressions over data that is no subject set (the JSON Logic conformance suite's cases).
 */
export async function parsePolicyPack(
  file: string,
  text: string,
  options: { checkFields?: boolean } = {},
): Promise<PolicyPack> {
  const { doc, lines, value } = parseYaml(text, file);

  const validate = await packValidator();
  if (!validate(value)) {
    // Every schema error at once (one per place and kind), in file order: a pack is fixed in one pass.
    const seen = new Set<string>();
    const found = validate.errors!.flatMap((e) => {
      const extra =
        e.keyword === 'additionalProperties'
          ? ` '${JSON.stringify(String(e.params['additionalProperty'])).slice(1, -1)}'`
          : ''; // escaped: a key can hold line breaks
      const allowed = e.keyword === 'enum' ? `: ${(e.params['allowedValues'] as unknown[]).join(', ')}` : '';
      const line = lineAt(doc, lines, e.instancePath);
      const ruleId = ruleIdAt(value, e.instancePath);
      const where = `${file}:${line}: ${ruleId ? `rule ${ruleId}: ` : ''}${e.instancePath || '(root)'}`;
      const text = `${where} ${e.message ?? 'is invalid'}${extra}${allowed}`;
      if (seen.has(text)) return [];
      seen.add(text);
      return [{ line, text }];
    });
    throw new MeshAuditError(
      found
        .sort((a, b) => a.line - b.line)
        .map((f) => f.text)
        .join('\n'),
    );
  }
  const pack = value as { pack: PolicyPack['pack']; rules: Rule[] };

  // Every problem of every rule is collected, then reported together.
  const problems: string[] = [];
  const report = (line: number, ruleId: string, message: string) =>
    problems.push(`${file}:${line}: rule ${ruleId}: ${message}`);
  const rules: LoadedRule[] = pack.rules.map((rule, index) => {
    const at = `/rules/${index}`;
    for (const field of ['where', 'each', 'discriminator', 'assert'] as const) {
      if (rule[field] === undefined) continue;
      for (const problem of checkLogic(rule[field], `${at}/${field}`))
        report(lineAt(doc, lines, problem.path), rule.id, `${problem.path.slice(at.length + 1)}: ${problem.message}`);
    }
    for (const [name, expr] of Object.entries(rule.let ?? {})) {
      for (const problem of checkLogic(expr, `${at}/let/${name}`))
        report(lineAt(doc, lines, problem.path), rule.id, `${problem.path.slice(at.length + 1)}: ${problem.message}`);
    }
    (rule.escalate ?? []).forEach((step, i) => {
      for (const problem of checkLogic(step.when, `${at}/escalate/${i}/when`))
        report(lineAt(doc, lines, problem.path), rule.id, `${problem.path.slice(at.length + 1)}: ${problem.message}`);
    });
    // A field the subject set does not have, read anywhere the rule decides (a misspelt `var` reads null).
    for (const problem of options.checkFields === false ? [] : unknownFieldReads(rule))
      report(lineAt(doc, lines, `${at}${problem.path}`), rule.id, `${problem.path.slice(1)}: ${problem.message}`);
    const known = new Set([
      ...SUBJECT_FIELDS[rule.subject],
      ...Object.keys(rule.let ?? {}),
      ...(rule.each !== undefined ? ['item'] : []),
    ]);
    for (const name of placeholders(rule.message)) {
      const head = name.split('.')[0]!;
      if (!known.has(head)) {
        report(
          lineAt(doc, lines, `${at}/message`),
          rule.id,
          `message: unknown placeholder {${name}} (known: ${[...known].sort().join(', ')})`,
        );
      }
    }
    return { ...rule, source: { file, line: lineAt(doc, lines, `${at}/id`) }, pack: pack.pack.id };
  });

  if (problems.length > 0) throw new MeshAuditError(problems.join('\n'));
  return { file, pack: pack.pack, rules };
}

/** A path is a pack file or a folder of them (`*.yaml`/`*.yml`, not `*.cases.yaml`). */
async function expandPolicyPath(path: string): Promise<string[]> {
  if (path === DEFAULT_POLICY && EMBEDDED) return [path];
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new MeshAuditError(`${path}: no such policy file or folder`);
  }
  if (!info.isDirectory()) return [path];
  const names = (await readdir(path)).filter((n) => /\.ya?ml$/.test(n) && !/\.cases\.ya?ml$/.test(n)).sort();
  if (names.length === 0) throw new MeshAuditError(`${path}: folder holds no policy (*.yaml)`);
  return names.map((n) => join(path, n));
}

/** Which packs a run loads: the shipped pack unless replaced on purpose, plus the packs added to it. */
export interface PolicyChoice {
  /** Packs (files or folders) added by `--policy` or the config's `policy`. */
  added: readonly string[];
  /** The shipped pack is loaded too (the default); false only by `--no-default-policy` or `defaultPolicy: false`. */
  shipped: boolean;
}

export const SHIPPED_ONLY: PolicyChoice = { added: [], shipped: true };

const shippedText = async (): Promise<string> =>
  EMBEDDED?.files['policies/mesh-core.yaml'] ?? (await readInput(DEFAULT_POLICY, 'policy'));

/**
 * Loads the packs a run evaluates: the shipped pack (unless `choice.shipped` is false) and every added
 * one, in that order. Packs add: naming a pack never drops the shipped one (a baseline would otherwise
 * call every shipped finding gone). The shipped pack named again (its file, or a byte-identical copy)
 * is loaded once; a rule id, rule name or pack id used twice across packs is an error, at the second.
 */
export async function loadPolicies(choice: PolicyChoice = SHIPPED_ONLY): Promise<PolicyPack[]> {
  const { added, shipped } = choice;
  if (!shipped && added.length === 0) {
    throw new MeshAuditError(
      '--no-default-policy (or defaultPolicy: false) leaves no rule to run: name the pack that replaces the shipped ' +
        'one with --policy FILE',
    );
  }
  const files = [
    ...new Set(
      (await Promise.all(added.map(expandPolicyPath))).flat().map((f) => (f === DEFAULT_POLICY ? f : resolve(f))),
    ),
  ];
  const packs: PolicyPack[] = [];
  let shippedFingerprint: string | undefined;
  if (shipped) {
    packs.push(await loadPolicyFile(DEFAULT_POLICY));
    if (files.length > 0) shippedFingerprint = packFingerprint(await shippedText());
  }
  for (const file of files) {
    if (shipped && (file === DEFAULT_POLICY || packFingerprint(await readInput(file, 'policy')) === shippedFingerprint))
      continue;
    packs.push(await loadPolicyFile(file));
  }
  const shippedId = shipped ? packs[0]?.pack.id : undefined;
  const clash = (first: { file: string }) =>
    shipped && first.file === DEFAULT_POLICY
      ? ' — the shipped pack has it: give your rule its own id and name, ' +
        'or replace the shipped pack on purpose with --no-default-policy'
      : '';
  const seenPacks = new Map<string, PolicyPack>();
  for (const pack of packs) {
    const other = seenPacks.get(pack.pack.id);
    if (other) {
      throw new MeshAuditError(
        `${pack.file}: duplicate pack id '${pack.pack.id}' (also ${other.file})` +
          (pack.pack.id === shippedId
            ? ' — the shipped pack has it: a copy of the shipped pack replaces it only with --no-default-policy; ' +
              'a pack of your own needs its own id'
            : ''),
      );
    }
    seenPacks.set(pack.pack.id, pack);
  }
  const seen = new Map<string, LoadedRule>();
  for (const rule of packs.flatMap((p) => p.rules)) {
    for (const key of [rule.id, rule.name]) {
      const other = seen.get(key);
      if (other)
        fail(
          rule.source.file,
          rule.source.line,
          rule.id,
          `duplicate rule ${key === rule.id ? 'id' : 'name'} '${key}' (first at ` +
            `${other.source.file}:${other.source.line})${clash(other.source)}`,
        );
      seen.set(key, rule);
    }
  }
  return packs;
}
