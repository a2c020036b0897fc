import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { collectDocker } from '../../src/collect/docker.js';
import { resolveEndpoint } from '../../src/collect/docker-endpoint.js';
import { createSafeValueMaker } from '../../src/secret/value.js';
import { tempDir } from '../support/cli.js';
import { createContainer, forEachEngine, removeContainers } from './engine.js';

/*
 * An unchanged container is recorded the same at every read. Docker lists a container's mounts in no order (it walks
 * a Go map: two inspects in a row of a container with four bind mounts give them rotated), so the record sorts them;
 * without that, serve read the files again at most container events (their key names the mounts) and two snapshots
 * of one host differed in mounts nobody touched.
 */
forEachEngine('one order of mounts from read to read', (e, it) => {
  const name = `ma-mount-order-${e.kind}-${process.pid}`;
  const dir = tempDir('ma-mount-order-', '/tmp');
  const destinations = ['/srv/d', '/srv/a', '/srv/c', '/srv/b', '/srv/e'];

  it.before(() => {
    const binds = destinations.flatMap((d) => {
      const source = join(dir, d.slice(1).replace('/', '-'));
      mkdirSync(source, { recursive: true });
      return ['-v', `${source}:${d}:ro`];
    });
    createContainer(e, name, ['--network', 'none', ...binds], ['sleep', '60']);
  });
  it.after(() => removeContainers(e, [name]));

  it('eight reads of an unchanged container give its mounts in one order, by destination', async () => {
    const orders: string[] = [];
    for (let read = 0; read < 8; read++) {
      const r = await collectDocker({ endpoint: resolveEndpoint(e.dockerHost), safe: createSafeValueMaker() });
      const mine = r.containers.find((c) => c.name === name);
      assert.ok(mine, `read ${read}: ${name} not among the containers: ${JSON.stringify(r.problems)}`);
      orders.push(mine.mounts.map((m) => m.destination).join(' '));
    }
    assert.equal([...new Set(orders)], [[...destinations].sort().join(' ')], 'the same order at every read');
  });
});
