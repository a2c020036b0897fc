import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HostModel, sha256 } from './host-model.js';

/**
 * A small host for baseline and alerting tests: one claimed container built from an env file.
 * `drift` rewrites one key of the file after the container was created (045), `stray` adds an
 * unclaimed container. Each call writes a fresh snapshot file into `dir` and returns its path.
 */
export function driftHostSnapshot(
  dir: string,
  name: string,
  options: { drift?: boolean; stray?: boolean; takenAt?: string } = {},
): string {
  const held = 'DATABASE_URL=postgresql://app:example@db:5432/app\nMODE=prod\n';
  const now = options.drift ? 'DATABASE_URL=postgresql://app:example@db2:5432/app\nMODE=prod\n' : held;
  const model = new HostModel('drift-host', options.takenAt ?? '2026-10-01T03:00:00Z')
    .file('/etc/mesh/app/app.env', now)
    .container({
      name: 'app',
      network: 'none',
      labels: {
        'mesh.module': 'app',
        'mesh.resource': 'app.server',
        'mesh.sources': '/etc/mesh/app/app.env',
        'mesh.source-digests': sha256(now),
      },
      env: { DATABASE_URL: 'postgresql://app:example@db:5432/app', MODE: 'prod' },
    });
  if (options.stray) model.container({ name: 'stray', network: 'none' });
  const snapshot = model
    .ledger([
      { id: 'app.server', type: 'container', target: 'app', sources: ['/etc/mesh/app/app.env'] },
      { id: 'app.env', type: 'file', target: '/etc/mesh/app/app.env' },
    ])
    .build();
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(snapshot));
  return path;
}
