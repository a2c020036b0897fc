import { compareText } from '../text/compare.js';
import type { SubjectSets } from '../facts/subjects.js';
import type {
  ContainerData,
  Exposure,
  FileData,
  ListenerData,
  NetworkData,
  VolumeData,
} from '../policy/subject-data.js';
import { severityRank, type Severity } from '../policy/types.js';
import type { Inventory, InventoryRow, ResourceKind } from './inventory.js';

/**
 * The adoption plan of a node: what an operator would do to make it ready, derived from its
 * inventory (pure). mesh-audit prints it and never carries it out.
 */
export interface AdoptionPlan {
  /**
   * Resources of unknown origin the operator may keep: each a ledger entry in the ledger's own format,
   * with what the findings say about it (severity, exposure) and a warning where recording it would hold
   * something exposed or in error for ever.
   */
  record: Recording[];
  /**
   * Stale resources at a former target, and resources the mesh wrote that nothing claims. Never a volume: a
   * volume holds data, and such a volume is under `review`, with what to do before removing it.
   */
  remove: Removal[];
  /** Drifted containers: recreate them by re-applying their module. */
  recreate: Recreation[];
  /** Targets two ledger entries claim. */
  resolve: Resolution[];
  /** Blocking findings no step above resolves: each needs a person's decision. */
  review: Review[];
  /** What the plan could not fill in (a port list not read), to do by hand. */
  notes: string[];
}

/** A ledger entry as the host agent writes it (src/collect/ledger-entries.ts), for a resource it found. */
export interface ProposedEntry {
  id: string;
  /** `service`: a host process listening beyond loopback, its target the process's executable (else its name). */
  type: 'container' | 'file' | 'network' | 'volume' | 'service';
  target: string;
  origin: 'found';
  /** The host ports it really listens on or publishes (a service: holds); absent when they could not be read. */
  holds?: number[];
  /** A file's sha256 as it is now. */
  digest?: string;
  /** The host never applied it. */
  applied_at: null;
}

/** One proposed "record as found": the entry to merge, and what the operator must know before merging it. */
export interface Recording {
  /** The ledger entry to merge into the host agent's ledger, as it is. */
  entry: ProposedEntry;
  /** The most severe finding about the resource, or null when no rule of the profile objects to it. */
  severity: Severity | null;
  /** The findings about it (their messages are in the report), most severe first. */
  findings: { ruleId: string; severity: Severity }[];
  /**
   * A container's or service's widest reach (`unknown`: on the host network, sockets not read); null for a file,
   * network or volume.
   */
  exposure: Exposure | null;
  /** The addresses it listens on beyond this host. */
  exposedEndpoints: string[];
  /** Why not to record it blindly: it is exposed (or may be), or a finding about it is an error; null otherwise. */
  warning: string | null;
}

export interface Removal {
  kind: 'container' | 'file' | 'network';
  target: string;
  /** The command an operator would run; printed, never executed. */
  command: string;
  standing: 'stale-former-target' | 'mesh-unclaimed';
  reason: string[];
  evidence: {
    status?: string;
    network_mode?: string;
    /** Host ports it has open (published, or listening on the host network). */
    open_ports?: number[] | null;
    exposed_endpoints?: string[];
    labels?: { module: string | null; resource: string | null };
    /** The ledger entries that last claimed it, and when. */
    last_claimed?: { id: string; moved_to: string | null; changed_at: string; last_seen: string }[];
    /** Ledger entries that name it as a source. */
    referenced_by?: string[];
    /** A network's attached containers (it cannot be removed while any is). */
    attached?: string[];
  };
}

export interface Recreation {
  container: string;
  entries: string[];
  /** The module to re-apply (its label, else its ledger entry's), or null when neither says. */
  module: string | null;
  reason: string[];
}

export interface Resolution {
  kind: ResourceKind;
  target: string;
  entries: string[];
  reason: string[];
}

export interface Review {
  ruleId: string;
  severity: Severity;
  subject: string;
  message: string;
  /** What to do first, where the finding alone does not say: a volume's data, a socket no process holds. */
  advice?: string;
}

/** A word a POSIX shell reads as itself: bare when it is plainly safe, else single-quoted. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * `found.<name>`: a container's, network's or volume's name, a file's or service's base name, made unique against
 * the ledger and each other.
 */
function proposedId(kind: ResourceKind | 'service', name: string, taken: Set<string>): string {
  const base = kind === 'file' || kind === 'service' ? (name.split('/').pop() ?? name) : name;
  const stem = `found.${base.replace(/[^A-Za-z0-9_.-]/g, '-') || 'file'}`;
  let id = stem;
  for (let n = 2; taken.has(id); n++) id = `${stem}-${n}`;
  taken.add(id);
  return id;
}

export function buildPlan(inventory: Inventory, subjects: SubjectSets): AdoptionPlan {
  const containerData = new Map(subjects.containers.map((s) => [s.data.name, s.data]));
  const fileData = new Map(subjects.files.map((s) => [s.data.path, s.data]));
  const networkData = new Map(subjects.networks.map((s) => [s.data.name, s.data]));
  const volumeData = new Map(subjects.volumes.map((s) => [s.data.name, s.data]));
  const listenerData = new Map(subjects.listeners.map((s) => [s.data.id, s.data]));
  const ledger = subjects.ledger.map((s) => s.data);
  const taken = new Set(ledger.map((d) => d.entry_id ?? d.id));
  const reasons = (row: InventoryRow) => row.findings.map((f) => `${f.ruleId}: ${f.message}`);
  const plan: AdoptionPlan = { record: [], remove: [], recreate: [], resolve: [], review: [], notes: [] };
  const planned = new Set<string>();
  const mark = (row: InventoryRow) => planned.add(`${row.kind} ${row.id}`);
  // A step only for what a rule put in its standing and blocks: a rule's finding is its reason.
  const ruled = (row: InventoryRow) => row.standingFrom === 'findings' && row.blocking;
  /** Host listeners of unknown origin, by the process holding them: one `service` entry each. */
  const services = new Map<string, { rows: InventoryRow[]; listeners: ListenerData[] }>();

  for (const row of inventory.rows) {
    const c = row.kind === 'container' ? containerData.get(row.id) : undefined;
    const f = row.kind === 'file' ? fileData.get(row.id) : undefined;
    const n = row.kind === 'network' ? networkData.get(row.id) : undefined;
    const v = row.kind === 'volume' ? volumeData.get(row.id) : undefined;
    const l = row.kind === 'listener' ? listenerData.get(row.id) : undefined;
    if (row.standing === 'unknown-unrecorded' && (c || f || n || v)) {
      plan.record.push(recordingOf(row, c, proposedEntry(row, c, f, taken, plan.notes)));
      mark(row);
    } else if (row.standing === 'unknown-unrecorded' && l?.process) {
      // Named by its executable where it was read (a `service` entry's target may be either: facts/host-objects.ts).
      const target = l.process.exe ?? l.process.name;
      if (target === null) continue;
      const group = services.get(target) ?? { rows: [], listeners: [] };
      group.rows.push(row);
      group.listeners.push(l);
      services.set(target, group);
      mark(row);
    } else if (
      (row.standing === 'stale-former-target' || row.standing === 'mesh-unclaimed') &&
      ruled(row) &&
      (c || f || n)
    ) {
      plan.remove.push(removalOf(row, row.standing, { c, f, n }, reasons(row)));
      mark(row);
    } else if (row.standing === 'drifted' && ruled(row) && row.kind === 'container') {
      const declared = ledger.find((e) => row.entries.includes(e.id) && e.module !== null);
      plan.recreate.push({
        container: row.id,
        entries: row.entries,
        module: c?.mesh.module ?? declared?.module ?? null,
        reason: reasons(row),
      });
      mark(row);
    } else if (row.standing === 'double-claimed' && ruled(row)) {
      plan.resolve.push({ kind: row.kind, target: row.id, entries: row.entries, reason: reasons(row) });
      mark(row);
    }
  }
  for (const [target, group] of services) plan.record.push(serviceRecording(target, group, taken));
  for (const b of inventory.blockers) {
    if (b.resource && planned.has(`${b.resource.kind} ${b.resource.id}`)) continue;
    const advice = b.resource ? adviceFor(b.resource, volumeData, listenerData) : null;
    plan.review.push({
      ruleId: b.ruleId,
      severity: b.severity,
      subject: `${b.subject.kind} ${b.subject.id}`,
      message: b.message,
      ...(advice !== null ? { advice } : {}),
    });
  }
  plan.record.sort((a, b) => compareText(a.entry.id, b.entry.id));
  return plan;
}

/**
 * Why a blocking volume or listener is left to a person, and what to do first. A volume holds data: no plan
 * removes it on sight, whatever its standing.
 */
function adviceFor(
  resource: { kind: ResourceKind; id: string },
  volumes: ReadonlyMap<string, VolumeData>,
  listeners: ReadonlyMap<string, ListenerData>,
): string | null {
  if (resource.kind === 'volume') {
    const v = volumes.get(resource.id);
    const at = v ? ` (at ${v.mountpoint})` : '';
    return (
      `a volume holds data${at}: find whose it is and whether its data is still needed, and back it up; then ` +
      `record it as a volume entry, or remove it only once its data is saved or known to be unneeded`
    );
  }
  if (resource.kind === 'listener') {
    const l = listeners.get(resource.id);
    return l?.owner === 'kernel'
      ? 'no process holds this socket (a kernel service such as NFS): find which, and bind or stop it'
      : 'its holder could not be named: find the process with ss -ltnp';
  }
  return null;
}

/** One `service` entry for a host process of unknown origin, with every port it listens on beyond loopback. */
function serviceRecording(
  target: string,
  group: { rows: InventoryRow[]; listeners: ListenerData[] },
  taken: Set<string>,
): Recording {
  const ports = [...new Set(group.listeners.map((l) => l.port))].sort((a, b) => a - b);
  const entry = orderedEntry({
    id: proposedId('service', target, taken),
    type: 'service',
    target,
    origin: 'found',
    holds: ports,
    applied_at: null,
  });
  const exposure: Exposure = group.listeners.some((l) => l.reach === 'all-interfaces') ? 'all-interfaces' : 'address';
  const endpoints = group.listeners.map((l) => l.endpoint).sort(compareText);
  const findings = group.rows.flatMap((r) => r.findings);
  return withWarning(entry, findings, exposure, endpoints);
}

/** Whether a container's open ports are known: on the host network they come from /proc. */
const portsKnown = (c: ContainerData): boolean => !c.host_network || c.proc_available;

/** The ledger entry that would record a resource of unknown origin as found; a note when its ports are not known. */
function proposedEntry(
  row: InventoryRow,
  c: ContainerData | undefined,
  f: FileData | undefined,
  taken: Set<string>,
  notes: string[],
): ProposedEntry {
  if (row.kind === 'listener') throw new Error('a listener is recorded as its process, a service entry');
  const entry: ProposedEntry = {
    id: proposedId(row.kind, row.id, taken),
    type: row.kind,
    target: row.id,
    origin: 'found',
    applied_at: null,
  };
  if (c) {
    // When /proc was not read the ports are not known, not none.
    if (!portsKnown(c))
      notes.push(
        `${entry.id}: the ports ${row.id} listens on were not read (${c.proc_reason ?? 'no /proc'}); add its ` +
          `holds by hand`,
      );
    else entry.holds = c.open_ports;
  } else if (f !== undefined && f.sha256 !== null) entry.digest = f.sha256;
  return orderedEntry(entry);
}

/**
 * A proposed entry with what the findings say about its resource. An exposed container is never
 * offered for recording without a warning: recorded as found, it would be held, as reachable as it
 * is now, for ever. The severity is the findings' (the rules decide it); the exposure is the fact.
 */
function recordingOf(row: InventoryRow, c: ContainerData | undefined, entry: ProposedEntry): Recording {
  return withWarning(entry, row.findings, c ? c.exposure : null, c ? c.exposed_endpoints : []);
}

function withWarning(
  entry: ProposedEntry,
  rowFindings: readonly { ruleId: string; severity: Severity }[],
  exposure: Exposure | null,
  exposedEndpoints: string[],
): Recording {
  const findings = rowFindings
    .map((x) => ({ ruleId: x.ruleId, severity: x.severity }))
    .sort((a, b) => severityRank(b.severity) - severityRank(a.severity) || compareText(a.ruleId, b.ruleId));
  const severity = findings[0]?.severity ?? null;
  const errors = findings.filter((x) => x.severity === 'error').map((x) => x.ruleId);
  const reach =
    exposure === 'all-interfaces'
      ? `exposed on all interfaces (${exposedEndpoints.join(', ')})`
      : exposure === 'address'
        ? `exposed on ${exposedEndpoints.join(', ')}`
        : exposure === 'unknown'
          ? 'on the host network with its sockets not read: it may be exposed'
          : null;
  const warning =
    reach !== null
      ? `${reach}; recorded as found it is held for ever, reachable as it is now: find out what it is and whether it ` +
        `must listen there before recording it`
      : errors.length > 0
        ? `an error finding (${[...new Set(errors)].join(', ')}): resolve it before recording`
        : null;
  return { entry, severity, findings, exposure, exposedEndpoints, warning };
}

function removalOf(
  row: InventoryRow,
  standing: Removal['standing'],
  of: { c: ContainerData | undefined; f: FileData | undefined; n: NetworkData | undefined },
  reason: string[],
): Removal {
  const { c, f, n } = of;
  const former = (c ?? f ?? n)!.formerly_claimed_by.map((x) => ({
    id: x.id,
    moved_to: x.current_target,
    changed_at: x.changed_at,
    last_seen: x.last_seen,
  }));
  const command =
    row.kind === 'container'
      ? `docker rm -f ${shellWord(row.id)}`
      : row.kind === 'network'
        ? `docker network rm ${shellWord(row.id)}`
        : `rm ${shellWord(row.id)}`;
  return {
    kind: row.kind === 'container' ? 'container' : row.kind === 'network' ? 'network' : 'file',
    target: row.id,
    command,
    standing,
    reason,
    evidence: c
      ? {
          status: c.status,
          network_mode: c.network_mode,
          open_ports: portsKnown(c) ? c.open_ports : null,
          exposed_endpoints: c.exposed_endpoints,
          labels: { module: c.mesh.module, resource: c.mesh.resource },
          last_claimed: former,
        }
      : n
        ? { labels: { module: n.mesh.module, resource: n.mesh.resource }, attached: n.containers, last_claimed: former }
        : { last_claimed: former, referenced_by: f!.referenced_by },
  };
}

/** The ledger's own field order. */
function orderedEntry(e: ProposedEntry): ProposedEntry {
  return {
    id: e.id,
    type: e.type,
    target: e.target,
    origin: e.origin,
    ...(e.holds !== undefined ? { holds: e.holds } : {}),
    ...(e.digest !== undefined ? { digest: e.digest } : {}),
    applied_at: null,
  };
}

export const isEmptyPlan = (p: AdoptionPlan): boolean =>
  p.record.length + p.remove.length + p.recreate.length + p.resolve.length + p.review.length + p.notes.length === 0;
