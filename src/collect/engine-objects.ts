import { compareText } from '../text/compare.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { LabelKeys, NetworkRecord, ObjectLabels, VolumeRecord } from '../snapshot/types.js';
import type { NetworkSummary, VolumeSummary } from './docker-api.js';

/** What each container inspected is attached to, by container name: network names and named volumes. */
export type Attachments = Map<string, { networks: string[]; volumes: string[] }>;

/** Compose's labels naming a project's objects: names, kept as written beside the mesh's own. */
const COMPOSE_IDENTITY = ['com.docker.compose.project', 'com.docker.compose.network', 'com.docker.compose.volume'];

// The engine writes the zero time for "never"; an empty string is no time either.
const timeOrNull = (t: string | undefined): string | null =>
  t === undefined || t === '' || t.startsWith('0001-01-01') ? null : t;

/** Every label secret-safe, and the labels that name things (mesh module and resource, Compose's) as written. */
export function objectLabels(
  raw: Record<string, string> | null | undefined,
  safe: SafeValueMaker,
  keys: LabelKeys | undefined,
): ObjectLabels {
  const identityKeys = new Set([...(keys ? [keys.module, keys.resource] : []), ...COMPOSE_IDENTITY]);
  const labels: ObjectLabels['labels'] = {};
  const identity: ObjectLabels['identity'] = {};
  for (const [key, value] of Object.entries(raw ?? {})) {
    if (typeof value !== 'string') continue;
    labels[key] = safe(value);
    if (identityKeys.has(key)) identity[key] = value;
  }
  return { labels, identity };
}

/** The containers using each network or volume, by its name, in name order. */
export function usersOf(attachments: Attachments, pick: 'networks' | 'volumes'): Map<string, string[]> {
  const users = new Map<string, string[]>();
  for (const [container, of] of attachments) {
    for (const name of new Set(of[pick])) {
      const list = users.get(name);
      if (list) list.push(container);
      else users.set(name, [container]);
    }
  }
  for (const list of users.values()) list.sort(compareText);
  return users;
}

export function networkRecords(
  list: readonly NetworkSummary[],
  attachments: Attachments,
  safe: SafeValueMaker,
  keys: LabelKeys | undefined,
): NetworkRecord[] {
  const users = usersOf(attachments, 'networks');
  return list
    .map((n) => ({
      id: typeof n.Id === 'string' ? n.Id : '',
      name: n.Name,
      driver: typeof n.Driver === 'string' ? n.Driver : '',
      scope: typeof n.Scope === 'string' ? n.Scope : '',
      internal: n.Internal === true,
      created: timeOrNull(n.Created),
      ...objectLabels(n.Labels, safe, keys),
      containers: users.get(n.Name) ?? [],
    }))
    .sort((a, b) => compareText(a.name, b.name) || compareText(a.id, b.id));
}

export function volumeRecords(
  list: readonly VolumeSummary[],
  attachments: Attachments,
  safe: SafeValueMaker,
  keys: LabelKeys | undefined,
): VolumeRecord[] {
  const users = usersOf(attachments, 'volumes');
  return list
    .map((v) => ({
      name: v.Name,
      driver: typeof v.Driver === 'string' ? v.Driver : '',
      scope: typeof v.Scope === 'string' ? v.Scope : '',
      mountpoint: typeof v.Mountpoint === 'string' ? v.Mountpoint : '',
      created: timeOrNull(v.CreatedAt),
      ...objectLabels(v.Labels, safe, keys),
      containers: users.get(v.Name) ?? [],
    }))
    .sort((a, b) => compareText(a.name, b.name));
}
