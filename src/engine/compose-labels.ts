import { posix } from 'node:path';

/*
 * Compose's own labels on the containers it makes, and the Compose files they name: read by the scan
 * (src/collect/files-collector.ts, which files to read) and by the facts (src/facts/inline-env.ts), one
 * reading for both.
 */

/** Compose's labels on a container it made (docker-compose 1.29). */
export const COMPOSE_LABELS = {
  service: 'com.docker.compose.service',
  configFiles: 'com.docker.compose.project.config_files',
  workingDir: 'com.docker.compose.project.working_dir',
} as const;

/**
 * The host paths of the Compose files a container's labels name, or why they are not known. docker-compose 1.29
 * writes the files as given (`-f app/docker-compose.yml`: relative to where it ran) and the project folder made
 * absolute from the first file's folder; so a relative name is resolved from the
 * project folder less the first file's own folder.
 */
export function composeFilesOf(labels: Readonly<Record<string, string>>): { paths: string[] } | { unknown: string } {
  const listed = labels[COMPOSE_LABELS.configFiles];
  if (listed === undefined || listed.trim() === '')
    return { unknown: `its Compose labels name no Compose file (label ${COMPOSE_LABELS.configFiles})` };
  const names = listed.split(',').map((n) => n.trim());
  const workingDir = labels[COMPOSE_LABELS.workingDir];
  if (names.every((n) => n.startsWith('/'))) return { paths: names.map((n) => posix.normalize(n)) };
  const relative = names.find((n) => !n.startsWith('/'))!;
  const firstDir = posix.normalize(posix.dirname(names[0]!));
  const base =
    workingDir === undefined || !workingDir.startsWith('/') || names[0]!.startsWith('/')
      ? null
      : firstDir === '.'
        ? workingDir
        : workingDir.endsWith('/' + firstDir)
          ? workingDir.slice(0, -(firstDir.length + 1)) || '/'
          : null;
  if (base === null)
    return { unknown: `its Compose file ${relative} is relative to where Compose ran, which no label names` };
  return { paths: names.map((n) => posix.resolve(base, n)) };
}

/** Where a service's `extends: {file}` is: relative to the folder of the Compose file that names it. */
export function extendedFile(composeFile: string, file: string): string {
  return posix.resolve(posix.dirname(composeFile), file);
}
