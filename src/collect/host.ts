import { hostname as osHostname } from 'node:os';
import { join } from 'node:path';
import { readRegularInput } from '../input/read.js';
import type { Snapshot } from '../snapshot/types.js';
import type { CollectSettings } from './contract.js';
import { ownContainerId } from './self.js';

/** The host's name: from settings, else the mounted host's /etc/hostname under --root, else ours. */
export async function resolveHostname(settings: Pick<CollectSettings, 'hostname' | 'root'>): Promise<string> {
  if (settings.hostname !== undefined) return settings.hostname;
  if (settings.root !== '/') {
    // The scanner runs in a container: the host's name is in the host's files, not in ours.
    try {
      const name = (await readRegularInput(join(settings.root, 'etc', 'hostname'))).toString('utf8').trim();
      if (name.length > 0) return name;
    } catch {
      // fall through to our own name
    }
  }
  return osHostname();
}

/**
 * Which host the snapshot is of: its name, its root, and the container the scanner runs in, if any (the ownership
 * and hardening rules leave it out: it is the tool, and mounts the host by design). Outside the collector contract
 * (src/collect/contract.ts): it names the snapshot, so it has no unread form; neither read throws (each falls back
 * to what the scanner knows).
 */
export async function hostIdentity(settings: Pick<CollectSettings, 'hostname' | 'root'>): Promise<Snapshot['host']> {
  const scannerContainer = await ownContainerId();
  return {
    hostname: await resolveHostname(settings),
    ...(settings.root !== '/' ? { root: settings.root } : {}),
    ...(scannerContainer !== null ? { scannerContainer } : {}),
  };
}
