import { normalImageId } from '../snapshot/image-id.js';
import type { Container, Snapshot } from '../snapshot/types.js';
import type { ContainerData } from '../policy/subject-data.js';

/*
 * Pure readings of snapshot@2's runtime facts: a container's security options, which image a tag
 * names now, and what the daemon enforces for every container. Shared by the containers, images and
 * daemon sets.
 */

/** The value of each `key=value` (or `key:value`, Docker's older form) security option of a key. */
function optionValues(options: readonly string[], key: string): string[] {
  return options.flatMap((o) => {
    const m = /^([a-z-]+)[=:](.*)$/s.exec(o);
    return m !== null && m[1] === key ? [m[2]!] : [];
  });
}

/** What a container's security options say: seccomp and AppArmor profiles, no-new-privileges, SELinux labels. */
export function securityOf(
  options: readonly string[],
  appArmorProfile: string,
): Pick<ContainerData, 'seccomp_profile' | 'apparmor_profile' | 'no_new_privileges' | 'selinux_labels'> {
  const seccomp = optionValues(options, 'seccomp').at(-1);
  const apparmor = optionValues(options, 'apparmor').at(-1);
  const nnp = options.flatMap((o) => (o === 'no-new-privileges' ? ['true'] : optionValues([o], 'no-new-privileges')));
  return {
    seccomp_profile:
      seccomp === undefined || seccomp === '' || seccomp === 'builtin' || seccomp === 'default'
        ? 'default'
        : seccomp === 'unconfined'
          ? 'unconfined'
          : 'custom',
    apparmor_profile: appArmorProfile !== '' ? appArmorProfile : (apparmor ?? ''),
    no_new_privileges: nnp.length > 0 && nnp.at(-1) !== 'false',
    selinux_labels: optionValues(options, 'label'),
  };
}

/**
 * The names a tag reference may be listed under by the engine: as written with `:latest` when it has
 * no tag, and its Docker Hub and Podman local long forms (`busybox` is `docker.io/library/busybox:latest`
 * and `localhost/busybox:latest`). Null for a reference that is no tag: by digest or by image id.
 */
export function tagNamesOf(reference: string): string[] | null {
  if (reference === '' || reference.includes('@') || /^(sha256:)?[0-9a-f]{12,64}$/.test(reference)) return null;
  const lastPart = reference.slice(reference.lastIndexOf('/') + 1);
  const ref = lastPart.includes(':') ? reference : `${reference}:latest`;
  const first = ref.split('/')[0]!;
  const hasRegistry = ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasRegistry) {
    const hubPath = ref.includes('/') ? ref : `library/${ref}`;
    return [ref, `docker.io/${hubPath}`, `localhost/${ref}`];
  }
  if (first === 'docker.io') {
    const path = ref.slice('docker.io/'.length);
    return [ref, path.startsWith('library/') ? path.slice('library/'.length) : path];
  }
  return [ref];
}

/** The image id a container's reference names now, or null (no tag, or a tag that names no image). */
export function tagNowOf(reference: string, tags: Readonly<Record<string, string>>): string | null {
  for (const name of tagNamesOf(reference) ?? []) {
    const id = tags[name];
    if (id !== undefined) return normalImageId(id);
  }
  return null;
}

/**
 * What the daemon enforces for every container: AppArmor and SELinux on the host (its /info security
 * options), and no-new-privileges (daemon.json or `--no-new-privileges`). Null when not all of it was
 * read: then it is unknown, and so is every fact built on it.
 */
export function daemonSecurityOf(snapshot: Snapshot): ContainerData['daemon_security'] | null {
  const { info, config, process } = snapshot.daemon;
  if (!info.available) return null;
  const names = info.securityOptions.map((o) => /^name=([^,]+)/.exec(o)?.[1] ?? o);
  // Podman has no daemon.json (what containers.conf sets shows in each container's own options): off.
  const podman = snapshot.docker?.kind === 'podman';
  const byConfig = config.available ? config.settings['no-new-privileges'] === true : podman ? false : undefined;
  const flag = process.available ? process.flags['no-new-privileges']?.at(-1) : undefined;
  const byFlag = process.available ? flag === true || flag === 'true' : undefined;
  // On for every container when either says so; off only when both were read and neither does.
  const nnp =
    byConfig === true || byFlag === true ? true : byConfig === undefined || byFlag === undefined ? null : false;
  if (nnp === null) return null;
  return { apparmor: names.includes('apparmor'), selinux: names.includes('selinux'), no_new_privileges: nnp };
}

/** The image facts a container carries, from the snapshot's images (null fields: not known). */
export interface ContainerImageFacts {
  tagNow: string | null;
  user: string | null;
  /** Why the tags are not known (the image list was not read), or null. */
  tagsUnread: string | null;
  /** Why the container's own image record is not known (its image is gone, or not read), or null. */
  imageUnread: string | null;
}

export function imageFactsOf(
  c: Container,
  images: Snapshot['images'],
  byId: ReadonlyMap<string, { user: string }>,
): ContainerImageFacts {
  if (!images.available) {
    const reason = `images not read: ${images.reason}`;
    return { tagNow: null, user: null, tagsUnread: reason, imageUnread: reason };
  }
  const record = c.imageId !== undefined ? byId.get(normalImageId(c.imageId)) : undefined;
  // What a tag names now comes from the tag list alone: an image gone from the engine (or not read)
  // leaves it known, and only the facts of the image record unknown.
  return {
    tagNow: tagNowOf(c.image, images.tags),
    user: record?.user ?? null,
    tagsUnread: null,
    imageUnread: record === undefined ? `the image of ${c.name} was not read` : null,
  };
}

/** Docker's restart manager takes a run shorter than this for a failed start (its backoff doubles). */
const FAILED_RUN_MS = 10_000;

/** Whether a restart policy restarts a container after the exit it last had (Podman's and Docker's rules). */
function policyRestarts(policy: { name: string; maxRetries: number }, exitCode: number, restarts: number): boolean {
  if (policy.name === 'always' || policy.name === 'unless-stopped') return true;
  return policy.name === 'on-failure' && exitCode !== 0 && (policy.maxRetries === 0 || restarts < policy.maxRetries);
}

/**
 * Whether the engine is restarting a container in a loop now, from one snapshot; null when that cannot
 * be known. Each engine shows a loop its own way (test/docker/image-health-live.test.ts):
 * - Docker says so between two restarts (State.Restarting, status `restarting`); a container it will
 *   not restart (stopped by hand, retries spent) is `exited`, whatever its restart count.
 * - Podman 4 never says so: between two restarts its container is `stopped` (exited, not yet cleaned
 *   up); stopped by hand or given up on, it is cleaned up to `exited`. So `stopped`, a policy that
 *   restarts it, and a restart before: it exited again after being restarted, and is restarted again.
 * - In the moment a looping container runs again, either engine reports it running: restarted by its
 *   policy at least twice since it was last started by hand (which resets the count) and started less
 *   than 10 s before the snapshot (or during it). A start time the engine did not give: unknown.
 */
export function restartLoopOf(c: Container, takenAt: string): boolean | null {
  const r = c.runtime;
  if (r === undefined) return false;
  if (r.restarting) return true;
  const { status, running, restartCount, startedAt } = c.state;
  if (status === 'stopped' && !running)
    return restartCount >= 1 && policyRestarts(r.restartPolicy, r.exitCode, restartCount);
  if (status !== 'running' || !running || restartCount < 2) return false;
  const started = startedAt === null ? NaN : Date.parse(startedAt);
  const taken = Date.parse(takenAt);
  if (Number.isNaN(started) || Number.isNaN(taken)) return null;
  return taken - started < FAILED_RUN_MS;
}
