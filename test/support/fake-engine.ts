import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { tempDir } from './cli.js';

/**
 * A stand-in Engine API on a unix socket that replays recorded `docker inspect` JSON, for the
 * failure cases a real engine cannot be made to produce on cue: 404 between list and inspect, 500,
 * an answer that never comes. Every request is recorded (method and path).
 */
export interface FakeEngine {
  dockerHost: string;
  requests: string[];
  /** How the fixture image's inspect answers from now on (an image deleted between two reads). */
  setImageBehaviour(behaviour: Exclude<InspectBehaviour, 'hang'>): void;
  close(): Promise<void>;
}

export type InspectBehaviour = 'ok' | 'gone' | 'error' | 'hang';

const fixture = (name: string): unknown => {
  const data = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'inspect', name), 'utf8')) as unknown;
  return Array.isArray(data) ? data[0] : data;
};

/**
 * `behaviour` by container name; `imageBehaviour` for the fixture image's inspect (every container uses the one image);
 * `listLabels`, by container name, labels added to its entry of the container list only (what the list says before
 * any inspect).
 */
export async function fakeEngine(
  behaviour: Record<string, InspectBehaviour>,
  errorBody = '{"message":"boom"}',
  imageBehaviour: Exclude<InspectBehaviour, 'hang'> = 'ok',
  listLabels: Record<string, Record<string, string>> = {},
): Promise<FakeEngine> {
  const recorded =
    fixture('containers-list.json') === undefined
      ? []
      : (JSON.parse(
          readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'inspect', 'containers-list.json'), 'utf8'),
        ) as { Id: string; Names: string[]; Labels?: Record<string, string> | null }[]);
  const list = recorded.map((c) => {
    const added = listLabels[c.Names[0]?.replace(/^\//, '') ?? ''];
    return added === undefined ? c : { ...c, Labels: { ...(c.Labels ?? {}), ...added } };
  });
  const inspects = ['env-file-container.json', 'host-network-httpd.json', 'stopped-container.json'].map(
    (f) => fixture(f) as { Id: string; Name: string; Image?: string; Config?: { Image?: string } },
  );
  const requests: string[] = [];
  const hanging: ServerResponse[] = [];
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'api-version': '1.41' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push(`${req.method} ${req.url}`);
    const path = (req.url ?? '').replace(/^\/v[\d.]+/, '').split('?')[0]!;
    if (path === '/_ping') {
      send(res, 200, 'OK');
      return;
    }
    // An events stream cut as soon as it began (serve's watch then opens it again).
    if (path === '/events') {
      res.writeHead(200, { 'content-type': 'application/json', 'api-version': '1.41' });
      res.end();
      return;
    }
    if (path === '/version') {
      send(res, 200, {
        Version: '20.10.24',
        ApiVersion: '1.41',
        MinAPIVersion: '1.12',
        Components: [{ Name: 'Engine', Version: '20.10.24' }],
      });
      return;
    }
    if (path === '/containers/json') {
      send(res, 200, list);
      return;
    }
    // Each image in use, tagged as its containers name it (snapshot@2 reads the list once).
    if (path === '/images/json') {
      const images = new Map<string, string[]>();
      for (const i of inspects)
        if (i.Image !== undefined)
          (images.get(i.Image) ?? images.set(i.Image, []).get(i.Image)!).push(i.Config?.Image ?? '');
      send(
        res,
        200,
        [...images].map(([Id, tags]) => ({ Id, RepoTags: [...new Set(tags)].filter((t) => t !== '') })),
      );
      return;
    }
    // The engine's own networks, and no volume (each list read once per scan).
    if (path === '/networks') {
      send(res, 200, [
        { Name: 'none', Id: 'f'.repeat(64), Driver: 'null', Scope: 'local', Internal: false, Labels: {} },
      ]);
      return;
    }
    if (path === '/volumes') {
      send(res, 200, { Volumes: [], Warnings: null });
      return;
    }
    if (path === '/info') {
      send(res, 200, {
        ServerVersion: '20.10.24',
        SecurityOptions: ['name=seccomp,profile=default'],
        Driver: 'overlay2',
      });
      return;
    }
    // The fixture image, as `docker import --change 'ENV PATH=/bin'` made it.
    if (/^\/images\/sha256:[0-9a-f]{64}\/json$/.test(path)) {
      if (imageBehaviour === 'gone') {
        send(res, 404, { message: 'No such image' });
        return;
      }
      if (imageBehaviour === 'error') {
        send(res, 500, errorBody);
        return;
      }
      send(res, 200, { Id: path.split('/')[2], Config: { Env: ['PATH=/bin'] } });
      return;
    }
    const m = /^\/containers\/([0-9a-f]+)\/json$/.exec(path);
    const inspect = m ? inspects.find((i) => i.Id === m[1]) : undefined;
    if (!inspect) {
      send(res, 404, { message: 'no such container' });
      return;
    }
    switch (behaviour[inspect.Name.replace(/^\//, '')] ?? 'ok') {
      case 'gone':
        send(res, 404, { message: `No such container: ${inspect.Id}` });
        return;
      case 'error':
        send(res, 500, errorBody);
        return;
      case 'hang':
        // Headers and a first byte, then nothing: a slow drip that an inactivity timeout never ends.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{');
        hanging.push(res);
        return;
      default:
        send(res, 200, inspect);
        return;
    }
  });
  const socket = join(tempDir('ma-fake-engine-', '/tmp'), 'docker.sock');
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    dockerHost: `unix://${socket}`,
    requests,
    setImageBehaviour: (behaviour) => (imageBehaviour = behaviour),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
