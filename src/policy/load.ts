import { hash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import { readInput } from '../input/read.js';
import { lineAt, parseYaml, schemaAt } from '../input/yaml.js';
import { didYouMean } from '../text/suggest.js';
import { validatorFor, type Validator } from '../input/validate.js';
import { MeshAuditError } from '../errors.js';
import { EMBEDDED } from '../runtime/embedded.js';
import { builtInText, HARDENING_PACK_FOLDER, packageFile, readPackageText, SHIPPED_PACK_FOLDER } from '../paths.js';
import { SUBJECT_FIELDS } from './fields.js';
import { unknownFieldReads } from './field-check.js';
import { withSubjectSets } from './pack-schema.js';
import { checkLogic } from './logic.js';
import { placeholders } from './template.js';
import type { LoadedRule, PolicyPack, Rule } from './types.js';

/** How the single executable names the pack it carries inside (not a folder: the texts are read from EMBEDDED). */
export const EMBEDDED_POLICY_PATH = `<built-in>/${SHIPPED_PACK_FOLDER}`;
/** The shipped pack (a pack folder). */
export const DEFAULT_POLICY = EMBEDDED ? EMBEDDED_POLICY_PATH : packageFile(...SHIPPED_PACK_FOLDER.split('/'));
/**
 * The second shipped pack, docker-hardening (the CIS Docker Benchmark, a pack folder): loaded only for
 * the `hardening` profile (PolicyChoice.hardening), so a run without it is what it always was.
 */
export const HARDENING_POLICY = EMBEDDED
  ? `<built-in>/${HARDENING_PACK_FOLDER}`
  : packageFile(...HARDENING_PACK_FOLDER.split('/'));
/** The id of the docker-hardening pack. */
export const HARDENING_PACK_ID = 'docker-hardening';
/** The shipped packs' folders by their path here (inside the single executable: `<built-in>/…`). */
const SHIPPED_FOLDERS: ReadonlyMap<string, string> = new Map([
  [DEFAULT_POLICY, SHIPPED_PACK_FOLDER],
  [HARDENING_POLICY, HARDENING_PACK_FOLDER],
]);
const isShippedPack = (path: string): boolean => SHIPPED_FOLDERS.has(path);
/** The file of a pack folder that names the pack; its other `*.yaml` files (not `*.cases.yaml`) hold rules. */
export const PACK_MANIFEST = 'pack.yaml';

const require = createRequire(import.meta.url);

/** Where `npm run build` writes the bundled pack already loaded (scripts/precompile.ts). */
export const PRECOMPILED_PACK = '../generated/bundled-pack.json';

/** The bundled pack as loadPack gives it, with the fingerprint of the YAML texts it came from. */
export interface PrecompiledPack {
  fingerprint: string;
  pack: PolicyPack['pack'];
  /** The pack's files by their name in its folder. */
  parts: string[];
  rules: Array<Omit<LoadedRule, 'source'> & { part: string; line: number }>;
}

/** One YAML file of a pack: the pack file itself, or the manifest or a rule file of a pack folder. */
export interface PackPart {
  file: string;
  text: string;
}

/** The fingerprint of a pack's texts: any edit, rename, added or removed file changes it. */
export const packFingerprint = (parts: readonly PackPart[]): string =>
  hash('sha256', JSON.stringify(parts.map((p) => [basename(p.file), p.text])), 'hex');

const isPackYaml = (name: string): boolean => /\.ya?ml$/.test(name) && !/\.cases\.ya?ml$/.test(name);

/** The manifest first, then the rule files by name: the order rules are loaded (and listed) in. */
const partOrder = (a: string, b: string): number =>
  a === PACK_MANIFEST ? -1 : b === PACK_MANIFEST ? 1 : a < b ? -1 : a > b ? 1 : 0;

/** A pack's YAML file: read from inside the single executable for the shipped pack's, else from disk. */
export async function readPackText(file: string): Promise<string> {
  const text = builtInText(file);
  if (text === undefined) throw new MeshAuditError(`${file}: not in the single executable`);
  return text ?? readInput(file, 'policy');
}

/** Whether a folder is a pack folder (it holds pack.yaml) rather than a folder of pack files. */
const isPackFolder = async (folder: string): Promise<boolean> => {
  try {
    return (await stat(join(folder, PACK_MANIFEST))).isFile();
  } catch {
    return false;
  }
};

/** The files of a pack (one for a pack file; the manifest and rule files of a pack folder), with their texts. */
export async function readPackParts(path: string): Promise<PackPart[]> {
  const folder = SHIPPED_FOLDERS.get(path);
  if (folder !== undefined && EMBEDDED) {
    const prefix = `${folder}/`;
    return Object.keys(EMBEDDED.files)
      .filter((key) => key.startsWith(prefix) && isPackYaml(key.slice(prefix.length)))
      .map((key) => key.slice(prefix.length))
      .sort(partOrder)
      .map((name) => ({ file: `${path}/${name}`, text: EMBEDDED!.files[`${prefix}${name}`]! }));
  }
  if (!(await isPackFolder(path))) return [{ file: path, text: await readInput(path, 'policy') }];
  const names = (await readdir(path)).filter(isPackYaml).sort(partOrder);
  return Promise.all(
    names.map(async (name) => ({ file: join(path, name), text: await readInput(join(path, name), 'policy') })),
  );
}

/**
 * The bundled pack loaded at build time, when its texts are still the ones it was built from: parsing
 * and checking the YAML took ~60 ms of every command (yaml's import included). Any other pack, or a
 * bundled pack edited since the build, is loaded from its text.
 */
function precompiled(path: string, parts: readonly PackPart[]): PolicyPack | undefined {
  if (path !== DEFAULT_POLICY) return undefined;
  let ready: PrecompiledPack;
  try {
    // PRECOMPILED_PACK written out: a bundler includes only what a literal require names (dist/program).
    ready = (EMBEDDED?.bundledPack ?? require('../generated/bundled-pack.json')) as PrecompiledPack;
  } catch {
    return undefined; // not built (tsc alone)
  }
  if (ready.fingerprint !== packFingerprint(parts)) return undefined;
  return {
    file: path,
    parts: ready.parts.map((name) => `${path}/${name}`),
    pack: ready.pack,
    rules: ready.rules.map(({ part, line, ...rule }) => ({ ...rule, source: { file: `${path}/${part}`, line } })),
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
/** The schema the validator was made of: what a key or value misspelt is the nearest of. */
let packSchema: object | undefined;
async function packValidator() {
  if (!validatePack) {
    packSchema = await readPolicySchema();
    validatePack = validatorFor('policy', packSchema);
  }
  return validatePack;
}

/**
 * The schema of the object at a JSON Pointer of a document, followed through `properties`, `items` and local `$ref`s
 * (the precompiled validator's `schemaPath` is relative to an inlined definition, so it cannot be used).
 */
function schemaOfInstance(schema: object | undefined, pointer: string): Record<string, unknown> | undefined {
  const deref = (node: Record<string, unknown> | undefined) =>
    typeof node?.['$ref'] === 'string' ? schemaAt(schema, node['$ref']) : node;
  let node = deref(schema as Record<string, unknown> | undefined);
  for (const part of pointer.split('/').slice(1)) {
    const next = /^\d+$/.test(part)
      ? node?.['items']
      : (node?.['properties'] as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    node = deref(typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : undefined);
  }
  return node;
}

/** The value at a JSON Pointer of a parsed document. */
function valueAt(value: unknown, pointer: string): unknown {
  let node = value;
  for (const part of pointer.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
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

/** A pack, from a pack file or a pack folder (`pack.yaml` and its rule files): one PolicyPack either way. */
export async function loadPack(path: string): Promise<PolicyPack> {
  const parts = await readPackParts(path);
  const pack = precompiled(path, parts) ?? (await parsePackParts(path, parts));
  // The shipped packs' rules have pages under docs/rules/ (their default link); no other pack's do.
  return isShippedPack(path)
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
  return parsePackParts(file, [{ file, text }], options);
}

/** What a file is to its pack: a whole pack, a pack folder's manifest (header only), or one of its rule files. */
type PartRole = 'pack' | 'manifest' | 'rules';

/** A schema error a pack folder's split makes expected: the manifest holds no rules, a rule file no header. */
const expectedOfRole = (role: PartRole, e: ErrorObject): boolean =>
  e.keyword === 'required' &&
  e.instancePath === '' &&
  e.params['missingProperty'] === (role === 'manifest' ? 'rules' : role === 'rules' ? 'pack' : undefined);

/** One file of a pack, parsed: what it is in the pack, its YAML document (for lines) and its value. */
type ParsedPart = { part: PackPart; role: PartRole } & ReturnType<typeof parseYaml>;

/**
 * A pack from its files: one pack file, or a pack folder's `pack.yaml` (the header, and rules if it
 * likes) and rule files (`schema` and `rules`, no header: the pack is named once). Every problem of
 * every file is reported together, each with its file:line.
 */
export async function parsePackParts(
  path: string,
  parts: readonly PackPart[],
  options: { checkFields?: boolean } = {},
): Promise<PolicyPack> {
  const roleOf = (part: PackPart): PartRole =>
    part.file === path ? 'pack' : basename(part.file) === PACK_MANIFEST ? 'manifest' : 'rules';
  const validate = await packValidator();
  const parsed: ParsedPart[] = parts.map((part) => ({ part, role: roleOf(part), ...parseYaml(part.text, part.file) }));
  const manifest = parsed.find((p) => p.role !== 'rules');
  if (!manifest) throw new MeshAuditError(`${path}: pack folder has no ${PACK_MANIFEST}`);
  const problems = parsed.flatMap((p) => schemaProblems(p, validate));
  if (problems.length > 0) throw new MeshAuditError(problems.join('\n'));
  const header = (manifest.value as { pack: PolicyPack['pack'] }).pack;

  // Every problem of every rule is collected, then reported together.
  const rules: LoadedRule[] = parsed.flatMap((p) =>
    ((p.value as { rules?: Rule[] }).rules ?? []).map((rule, index) => {
      problems.push(...ruleProblems(rule, index, p, options.checkFields !== false));
      return {
        ...rule,
        source: { file: p.part.file, line: lineAt(p.doc, p.lines, `/rules/${index}/id`) },
        pack: header.id,
      };
    }),
  );

  if (problems.length > 0) throw new MeshAuditError(problems.join('\n'));
  return { file: path, parts: parts.map((p) => p.file), pack: header, rules };
}

/**
 * What the pack's schema refuses in one file, each with its file:line: every schema error at once (one per
 * place and kind), in file order, so a pack is fixed in one pass.
 */
function schemaProblems(
  { part: { file }, role, doc, lines, value }: ParsedPart,
  validate: Validator<unknown>,
): string[] {
  const problems: string[] = [];
  if (role === 'rules' && value !== null && typeof value === 'object' && 'pack' in value) {
    problems.push(
      `${file}:${lineAt(doc, lines, '/pack')}: /pack: ` +
        `a rule file of a pack folder names no pack (${PACK_MANIFEST} does)`,
    );
  }
  if (validate(value)) return problems;
  const seen = new Set<string>();
  const found = validate.errors!.flatMap((e) => {
    if (expectedOfRole(role, e)) return [];
    const line = lineAt(doc, lines, e.instancePath);
    const text = schemaErrorText(e, file, line, ruleIdAt(value, e.instancePath)) + nearest(e, value);
    if (seen.has(text)) return [];
    seen.add(text);
    return [{ line, text }];
  });
  return [...problems, ...found.sort((a, b) => a.line - b.line).map((f) => f.text)];
}

/** The known key or allowed value nearest to a misspelt one (`severty`: severity), as config typos get. */
function nearest(e: ErrorObject, value: unknown): string {
  if (e.keyword === 'additionalProperties') {
    const known = Object.keys(
      (schemaOfInstance(packSchema, e.instancePath)?.['properties'] as object | undefined) ?? {},
    );
    return didYouMean(String(e.params['additionalProperty']), known);
  }
  const written = valueAt(value, e.instancePath);
  if (e.keyword === 'enum' && typeof written === 'string')
    return didYouMean(written, (e.params['allowedValues'] as unknown[]).map(String));
  if (e.keyword === 'format' && e.params['format'] === 'date') return ' (a date is written YYYY-MM-DD)';
  return '';
}

/** One schema error as the author reads it: where, what is wrong, and what the schema allows there. */
function schemaErrorText(e: ErrorObject, file: string, line: number, ruleId: string | undefined): string {
  const extra =
    e.keyword === 'additionalProperties'
      ? ` '${JSON.stringify(String(e.params['additionalProperty'])).slice(1, -1)}'`
      : ''; // escaped: a key can hold line breaks
  const allowed = e.keyword === 'enum' ? `: ${(e.params['allowedValues'] as unknown[]).join(', ')}` : '';
  // Remediation was once a paragraph of `help`: say where that paragraph goes now.
  const hint =
    e.keyword === 'required' && e.params['missingProperty'] === 'remediation'
      ? ' (what to do about a finding, in markdown: a **Remediation:** paragraph of help moves there)'
      : '';
  const where = `${file}:${line}: ${ruleId ? `rule ${ruleId}: ` : ''}${e.instancePath || '(root)'}`;
  return `${where} ${e.message ?? 'is invalid'}${extra}${allowed}${hint}`;
}

/**
 * What is wrong with one rule the schema let through, each with its file:line: its logic, the fields it reads
 * (unless `checkFields` is false) and its message's placeholders.
 */
function ruleProblems(
  rule: Rule,
  index: number,
  { part: { file }, doc, lines }: ParsedPart,
  checkFields: boolean,
): string[] {
  const problems: string[] = [];
  const at = `/rules/${index}`;
  const report = (line: number, message: string) => problems.push(`${file}:${line}: rule ${rule.id}: ${message}`);
  const reportLogic = (expr: Parameters<typeof checkLogic>[0], path: string) => {
    for (const problem of checkLogic(expr, path))
      report(lineAt(doc, lines, problem.path), `${problem.path.slice(at.length + 1)}: ${problem.message}`);
  };
  for (const field of ['where', 'each', 'discriminator', 'assert'] as const) {
    if (rule[field] !== undefined) reportLogic(rule[field], `${at}/${field}`);
  }
  for (const [name, expr] of Object.entries(rule.let ?? {})) reportLogic(expr, `${at}/let/${name}`);
  (rule.escalate ?? []).forEach((step, i) => reportLogic(step.when, `${at}/escalate/${i}/when`));
  // A field the subject set does not have, read anywhere the rule decides (a misspelt `var` reads null).
  for (const problem of checkFields ? unknownFieldReads(rule) : [])
    report(lineAt(doc, lines, `${at}${problem.path}`), `${problem.path.slice(1)}: ${problem.message}`);
  const known = new Set([
    ...SUBJECT_FIELDS[rule.subject],
    ...Object.keys(rule.let ?? {}),
    ...(rule.each !== undefined ? ['item'] : []),
  ]);
  for (const name of placeholders(rule.message)) {
    const head = name.split('.')[0]!;
    if (!known.has(head))
      report(
        lineAt(doc, lines, `${at}/message`),
        `message: unknown placeholder {${name}} (known: ${[...known].sort().join(', ')})`,
      );
  }
  return problems;
}

/**
 * A path is a pack file, a pack folder (it holds pack.yaml: one pack), or a folder of packs: its pack
 * files (`*.yaml`/`*.yml`, not `*.cases.yaml`) and its pack folders, by name.
 */
async function expandPolicyPath(path: string): Promise<string[]> {
  if (isShippedPack(path) && EMBEDDED) return [path];
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new MeshAuditError(`${path}: no such policy file or folder`);
  }
  if (!info.isDirectory() || (await isPackFolder(path))) return [path];
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const found: string[] = [];
  for (const entry of entries) {
    const at = join(path, entry.name);
    if (entry.isDirectory() ? await isPackFolder(at) : isPackYaml(entry.name)) found.push(at);
  }
  if (found.length === 0)
    throw new MeshAuditError(`${path}: folder holds no policy (*.yaml, or a folder with ${PACK_MANIFEST})`);
  return found;
}

/**
 * Every pack shipped with mesh-audit, whatever a run's profile or settings load: the rules that have a
 * page under docs/rules/ and a link to it (`npm run docs`, scripts/docs-pages.ts; report/rule-docs.ts).
 */
export async function loadShippedPacks(): Promise<PolicyPack[]> {
  // The hardening pack too: a run loads it only for its profile, but its rules are shipped and documented.
  return loadPolicies({ added: [], shipped: true, hardening: true });
}

/** Which packs a run loads: the shipped pack unless replaced on purpose, plus the packs added to it. */
export interface PolicyChoice {
  /** Packs (files or folders) added by `--policy` or the config's `policy`. */
  added: readonly string[];
  /** The shipped pack is loaded too (the default); false only by `--no-default-policy` or `defaultPolicy: false`. */
  shipped: boolean;
  /** The shipped docker-hardening pack is loaded too: the run's profile is `hardening`. */
  hardening?: boolean;
}

export const SHIPPED_ONLY: PolicyChoice = { added: [], shipped: true };

/**
 * Loads the packs a run evaluates: the shipped pack (unless `choice.shipped` is false) and every added
 * one, in that order. Packs add: naming a pack never drops the shipped one (a baseline would otherwise
 * call every shipped finding gone). The shipped pack named again (its file, or a byte-identical copy)
 * is loaded once; a rule id, rule name or pack id used twice across packs is an error, at the second.
 */
export async function loadPolicies(choice: PolicyChoice = SHIPPED_ONLY): Promise<PolicyPack[]> {
  const { added, shipped, hardening = false } = choice;
  if (!shipped && !hardening && added.length === 0) {
    throw new MeshAuditError(
      '--no-default-policy (or defaultPolicy: false) leaves no rule to run: name the pack that replaces the shipped ' +
        'one with --policy FILE',
    );
  }
  const files = [
    ...new Set((await Promise.all(added.map(expandPolicyPath))).flat().map((f) => (isShippedPack(f) ? f : resolve(f)))),
  ];
  const packs: PolicyPack[] = [];
  let shippedFingerprint: string | undefined;
  if (shipped) {
    packs.push(await loadPack(DEFAULT_POLICY));
    if (files.length > 0) shippedFingerprint = packFingerprint(await readPackParts(DEFAULT_POLICY));
  }
  if (hardening) packs.push(await loadPack(HARDENING_POLICY));
  for (const file of files) {
    if (hardening && file === HARDENING_POLICY) continue;
    if (shipped && (file === DEFAULT_POLICY || packFingerprint(await readPackParts(file)) === shippedFingerprint))
      continue;
    packs.push(await loadPack(file));
  }
  const shippedId = shipped ? packs[0]?.pack.id : undefined;
  const clash = (first: LoadedRule) =>
    shipped && first.shipped === true
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
            `${other.source.file}:${other.source.line})${clash(other)}`,
        );
      seen.set(key, rule);
    }
  }
  return packs;
}
