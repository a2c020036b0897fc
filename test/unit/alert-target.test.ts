import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { alertmanagerTargetOf, shownAlertmanagerSettings } from '../../src/alert/target.js';
import { MeshAuditError } from '../../src/errors.js';
import { tempDir } from '../support/cli.js';

/** The usage error `work` throws (exit 2), as a person reads it. */
async function refusal(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
  } catch (err) {
    assert.instance(err, MeshAuditError);
    assert.is((err as MeshAuditError).exitCode, 2);
    return (err as Error).message;
  }
  throw new Error('not refused');
}

test('no URL, no target; a URL alone, no credentials and the default timeout', async () => {
  assert.is(await alertmanagerTargetOf(undefined, { username: 'u', password: 'p' }, {}), undefined);
  const t = await alertmanagerTargetOf('http://127.0.0.1:9093', undefined, {});
  assert.equal(
    { url: t?.url.href, auth: t?.auth, timeoutMs: t?.timeoutMs },
    { url: 'http://127.0.0.1:9093/', auth: undefined, timeoutMs: 10_000 },
  );
});

test("credentials: the environment over the config, a file's last line break dropped; basic or bearer, never both", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'pw'), 's3cret\n');
  const fromFile = await alertmanagerTargetOf(
    undefined,
    { url: 'https://am:9093', username: 'mesh', passwordFile: join(dir, 'pw'), timeoutSeconds: 2 },
    {},
    'c.yaml',
  );
  assert.equal(fromFile?.auth, { kind: 'basic', username: 'mesh', password: 's3cret' });
  assert.is(fromFile?.timeoutMs, 2000);
  const fromEnv = await alertmanagerTargetOf(
    'http://am',
    { username: 'mesh', password: 'old' },
    { MESH_AUDIT_ALERTMANAGER_PASSWORD: 'new' },
  );
  assert.equal(fromEnv?.auth, { kind: 'basic', username: 'mesh', password: 'new' });
  const bearer = await alertmanagerTargetOf('http://am', undefined, {
    MESH_AUDIT_ALERTMANAGER_BEARER_TOKEN: 'abc.DEF-1_2~3+/=',
  });
  assert.equal(bearer?.auth, { kind: 'bearer', token: 'abc.DEF-1_2~3+/=' });
  assert.match(
    await refusal(() =>
      alertmanagerTargetOf(
        'http://am',
        { username: 'u', password: 'p' },
        { MESH_AUDIT_ALERTMANAGER_BEARER_TOKEN: 't' },
      ),
    ),
    'both a bearer token and basic auth',
  );
  assert.match(
    await refusal(() => alertmanagerTargetOf('http://am', { password: 'p' }, {})),
    'needs both a username and a password',
  );
  assert.match(
    await refusal(() => alertmanagerTargetOf('http://am', { password: 'p', passwordFile: '/x' }, {}, 'c.yaml')),
    'c.yaml: alertmanager has both password and passwordFile',
  );
});

test('refused, and never quoted: credentials in the URL, a token that is not one, a password with a line break', async () => {
  const inUrl = await refusal(() => alertmanagerTargetOf('http://mesh:hunter2@am:9093/', undefined, {}));
  assert.match(inUrl, '--alertmanager http://***@am:9093/: credentials in the URL are refused');
  assert.not.match(inUrl, 'hunter2');
  const broken = await refusal(() => alertmanagerTargetOf('http://mesh:hunter2@[::', undefined, {}));
  assert.not.match(broken, 'hunter2');
  const token = await refusal(() =>
    alertmanagerTargetOf('http://am', undefined, { MESH_AUDIT_ALERTMANAGER_BEARER_TOKEN: 'tok en\nx' }),
  );
  assert.not.match(token, 'tok en');
  const pw = await refusal(() =>
    alertmanagerTargetOf('http://am', { username: 'u' }, { MESH_AUDIT_ALERTMANAGER_PASSWORD: 'a\nb-secret' }),
  );
  assert.not.match(pw, 'b-secret');
  assert.match(
    await refusal(() => alertmanagerTargetOf('ftp://am', undefined, {})),
    "--alertmanager needs an http:// or https:// URL of Alertmanager (e.g. http://127.0.0.1:9093), not 'ftp://am'",
  );
  assert.match(
    await refusal(() => alertmanagerTargetOf('localhost:9093', undefined, {})),
    '--alertmanager needs an http:// or https:// URL',
  );
});

test('config show hides a password or token given in the file', () => {
  assert.equal(shownAlertmanagerSettings({ url: 'http://u:p@am', username: 'u', password: 'p', bearerToken: 't' }), {
    url: 'http://***@am',
    username: 'u',
    password: '(set, not shown)',
    bearerToken: '(set, not shown)',
  });
});

test.run();
