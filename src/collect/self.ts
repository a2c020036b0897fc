import { readFile } from 'node:fs/promises';

/**
 * The engine id of the container the scanner itself runs in, or null when it runs on the host (or the id
 * cannot be told). Read from the scanner's own /proc/self/mountinfo: Docker and Podman bind the
 * container's hostname, hosts and resolv.conf files from its folder, whose name is the 64-hex id
 * (`…/containers/<id>/hostname`; Podman `…/<driver>-containers/<id>/userdata/hostname`, the storage
 * driver's name first: `overlay-`, `vfs-`, `btrfs-`…). That holds with cgroup v2 and a private cgroup
 * namespace too, where /proc/self/cgroup says only `0::/`. Never guessed from a label: any container could
 * carry one and so escape the rules that leave the scanner out (MA2001, the hardening rules).
 */
export function ownContainerId(mountinfo = SELF_MOUNTINFO): Promise<string | null> {
  // A process does not move between containers: its own is read once (serve reads the host again and again, and the
  // mountinfo of a host running hundreds of containers holds a line for each of their mounts).
  if (mountinfo !== SELF_MOUNTINFO) return readOwnContainerId(mountinfo);
  return (ownId ??= readOwnContainerId(mountinfo));
}

const SELF_MOUNTINFO = '/proc/self/mountinfo';
let ownId: Promise<string | null> | undefined;

async function readOwnContainerId(mountinfo: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(mountinfo, 'utf8');
  } catch {
    return null; // not Linux, or /proc not mounted: the scanner is in no container we can tell
  }
  return containerIdFromMountinfo(text);
}

const ENGINE_FILE = /\/(?:[a-z0-9]{1,32}-)?containers\/([0-9a-f]{64})\/(?:userdata\/)?(?:hostname|hosts|resolv\.conf)$/;

/** The container id named by the bind mounts of /etc/hostname, /etc/hosts or /etc/resolv.conf in a mountinfo text. */
export function containerIdFromMountinfo(text: string): string | null {
  for (const line of text.split('\n')) {
    // Field 5 is the mount point; field 4 the root of the mount within its file system (the source path).
    const fields = line.split(' ');
    if (!['/etc/hostname', '/etc/hosts', '/etc/resolv.conf'].includes(fields[4] ?? '')) continue;
    const m = ENGINE_FILE.exec(fields[3] ?? '');
    if (m) return m[1]!;
  }
  return null;
}
