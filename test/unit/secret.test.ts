import { suite } from 'uvu';
import { keptLabels, labelIsSecret, SECRET_LABEL_PREFIX } from '../../src/secret/labels.js';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { createSafeValueMaker, SHAPE_PATTERN, shapeOf } from '../../src/secret/value.js';

const shape = suite('shapeOf');

shape('an empty host stays visibly empty (incident 045)', () => {
  assert.is(shapeOf('postgresql://u:p@:20000/db'), 'postgresql://…@:20000/…');
});

shape('scheme, host and port are kept; userinfo and path hidden', () => {
  assert.is(shapeOf('postgresql://gitea:hunter2@db.internal:5432/gitea'), 'postgresql://…@db.internal:5432/…');
});

shape('an IPv6 host in brackets is kept whole', () => {
  assert.is(shapeOf('redis://:hunter2@[::1]:6379/0'), 'redis://…@[::1]:6379/…');
  assert.is(shapeOf('http://[2001:db8::7]:8080'), 'http://[2001:db8::7]:8080');
});

shape('a URL without userinfo has no …@', () => {
  assert.is(shapeOf('https://git.example.org:3000'), 'https://git.example.org:3000');
  assert.is(shapeOf('https://git.example.org/'), 'https://git.example.org/');
  assert.is(shapeOf('https://git.example.org/api/v1?token=abc'), 'https://git.example.org/…?…');
});

shape('the rest keeps its structure: a path, a query, a fragment, each as …', () => {
  assert.is(shapeOf('https://git.example.org?token=abc'), 'https://git.example.org?…');
  assert.is(shapeOf('https://git.example.org/x#frag'), 'https://git.example.org/…#…');
  assert.is(shapeOf('https://git.example.org/?a=1#f'), 'https://git.example.org/?…#…');
});

shape('a host is shown only when it is plainly not a credential', () => {
  // Shown: IPv4, IPv6 in brackets, localhost, a lowercase DNS name with a dot and a top-level label of letters.
  assert.is(shapeOf('postgresql://u:p@127.0.0.1:20000/db'), 'postgresql://…@127.0.0.1:20000/…');
  assert.is(shapeOf('http://localhost:3000'), 'http://localhost:3000');
  assert.is(shapeOf('postgresql://u:p@db.mesh.internal:20000/db'), 'postgresql://…@db.mesh.internal:20000/…');
  // Hidden: one word, anything with capitals, symbols or a top-level label with digits, a bad IP.
  assert.is(shapeOf('http://db:5432'), 'http://…:5432');
  assert.is(shapeOf('http://Db.Example.org'), 'http://…');
  assert.is(shapeOf('http://eyJhbGciOi.eyJzdWIi.SflKxwRJ/'), 'http://…/');
  assert.is(shapeOf('http://abc.d3f'), 'http://…');
  assert.is(shapeOf('http://10.0.0.300'), 'http://…');
  assert.is(shapeOf('http://[not-v6]:80'), 'http://…:80');
});

shape('a token where the host goes is hidden (issue 15: it was printed verbatim)', () => {
  assert.is(shapeOf('redis://Zx9-tokenvalue-81'), 'redis://…');
  assert.is(shapeOf('token://Zx9-tokenvalue-81'), 'token://…');
  assert.is(shapeOf('postgresql://Zx9-tokenvalue-81:5432/db'), 'postgresql://…:5432/…');
  assert.is(shapeOf('postgresql://Zx9-tokenvalue-81@:5432/db'), 'postgresql://…@:5432/…');
});

shape('a port is at most five digits up to 65535; anything else there is hidden', () => {
  assert.is(shapeOf('redis://db.internal:6379'), 'redis://db.internal:6379');
  assert.is(shapeOf('redis://db.internal:'), 'redis://db.internal:');
  assert.is(shapeOf('redis://db.internal:86753091'), 'redis://db.internal:…');
  assert.is(shapeOf('redis://db.internal:70000'), 'redis://db.internal:…');
  assert.is(shapeOf('redis://db.internal:pa55word'), 'redis://db.internal:…');
});

shape('a value with a scheme but no // shows nothing but its length (token:X, user:password)', () => {
  assert.is(shapeOf('token:Zx9-tokenvalue-81'), '<23 chars>');
  assert.is(shapeOf('admin:hunter2hunter2'), '<20 chars>');
});

shape('a plain string gives its length', () => {
  assert.is(shapeOf('s3cr3t-value'), '<12 chars>');
  assert.is(shapeOf(''), '<0 chars>');
});

shape('length is counted in code points, not UTF-16 units', () => {
  // 'pässwörd' + an emoji outside the BMP: 9 code points, 10 UTF-16 units.
  const raw = 'pässwörd\u{1F600}';
  assert.is(raw.length, 10);
  assert.is(shapeOf(raw), '<9 chars>');
});

shape('the raw password never appears in the shape', () => {
  const password = 'Xq7-hunter2-Zz';
  const values = [
    `postgresql://gitea:${password}@:20000/gitea`,
    `postgresql://gitea:${password}@db.internal:5432/gitea`,
    `redis://:${password}@[::1]:6379/0`,
    `mysql://${password}@db:3306/app`,
    `https://db.example.org/?password=${password}`,
    `https://db.example.org#${password}`,
    password,
    `multi\nline ${password}`,
  ];
  for (const value of values) {
    const s = shapeOf(value);
    assert.not.ok(s.includes(password), `${value} -> ${s}`);
    assert.not.ok(s.includes('hunter2'), `${value} -> ${s}`);
  }
});

shape(
  'a password with an unencoded @ does not leak into the host (userinfo ends at the last @, as in WHATWG URL)',
  () => {
    // An earlier URL pattern ended userinfo at the first '@' and showed 'prod' (part of the password) as host.
    const raw = 'postgresql://gitea:hunter2@prod@db.internal:5432/gitea';
    const s = shapeOf(raw);
    assert.not.ok(s.includes('prod'), s);
    assert.is(s, 'postgresql://…@db.internal:5432/…');
  },
);

shape('a password with an unencoded / does not leak as a host or port', () => {
  for (const raw of [
    'postgresql://gitea:1234/xyzzy@db.internal:5432/gitea',
    'postgresql://gitea:plugh/xyzzy@db.internal/gitea',
  ]) {
    const s = shapeOf(raw);
    assert.not.ok(
      s.includes('1234') || s.includes('plugh') || s.includes('xyzzy') || s.includes('gitea:'),
      `${raw} -> ${s}`,
    );
    assert.is(s, 'postgresql://…');
  }
});

shape('every shape matches SHAPE_PATTERN (what a snapshot is checked against), and no raw URL or token does', () => {
  const pattern = new RegExp(SHAPE_PATTERN, 'u');
  const part = fc.string({ unit: fc.constantFrom(...'aZ09.-_:@/?#[]%~+='), maxLength: 12 });
  const host = fc.oneof(
    part,
    fc.constantFrom('', 'localhost', '10.0.0.1', '[::1]', '[fe80::1%eth0]', 'db.mesh.internal', 'DB.example.org'),
  );
  const url = fc
    .tuple(fc.constantFrom('postgresql', 'redis', 'x-custom+tls', 'h'), fc.option(part), host, fc.option(part), part)
    .map(
      ([scheme, user, h, port, rest]) =>
        `${scheme}://${user === null ? '' : `${user}@`}${h}${port === null ? '' : `:${port}`}${rest}`,
    );
  fc.assert(
    fc.property(fc.oneof(url, fc.string(), part), (raw) => {
      assert.ok(
        pattern.test(shapeOf(raw)),
        `${JSON.stringify(shapeOf(raw))} (of ${JSON.stringify(raw)}) does not match`,
      );
    }),
    { numRuns: 2000, seed: 0x5ba9e },
  );
  for (const raw of [
    'postgresql://app:hunter2@db/x',
    'redis://:hunter2@10.0.0.1:6379',
    'token:hunter2',
    'admin:hunter2',
    'hunter2',
    'https://db/hunter2',
  ]) {
    assert.not.ok(pattern.test(raw), raw);
  }
});

shape('the examples of docs/secrets.md are what shapeOf gives', async () => {
  const { readFileSync } = await import('node:fs');
  const { packageFile } = await import('../../src/paths.js');
  const guide = readFileSync(packageFile('docs', 'secrets.md'), 'utf8');
  const rows = [...guide.matchAll(/^\| `([^`]+)`[^|]*\| `([^`]+)` \|$/gm)].filter((m) => !m[1]!.startsWith('{'));
  assert.ok(rows.length >= 5, `${rows.length} rows`);
  for (const [, value, shown] of rows) assert.is(shapeOf(value!), shown, value);
});

shape.run();

const maker = suite('createSafeValueMaker');

maker('same raw value gives the same digest within one maker; different values differ', () => {
  const safe = createSafeValueMaker();
  const a1 = safe('postgresql://u:p@:20000/db');
  const a2 = safe('postgresql://u:p@:20000/db');
  const b = safe('postgresql://u:p@db:20000/db');
  assert.is(a1.digest, a2.digest);
  assert.is.not(a1.digest, b.digest);
  assert.is(a1.shape, 'postgresql://…@:20000/…');
});

maker('two makers give different digests for the same value', () => {
  const a = createSafeValueMaker()('same-value');
  const b = createSafeValueMaker()('same-value');
  assert.is.not(a.digest, b.digest);
  assert.is(a.shape, b.shape);
});

maker('a maker given the same key is deterministic', () => {
  const key = Buffer.alloc(32, 7);
  assert.is(createSafeValueMaker(key)('v').digest, createSafeValueMaker(key)('v').digest);
  assert.is.not(createSafeValueMaker(key)('v').digest, createSafeValueMaker(Buffer.alloc(32, 8))('v').digest);
});

maker('digest format is hmac-sha256:<64 hex>, and it holds no raw value', () => {
  const safe = createSafeValueMaker();
  for (const raw of ['', 'x', 'hunter2', 'pässwörd\u{1F600}', 'a'.repeat(10_000)]) {
    const v = safe(raw);
    assert.match(v.digest, /^hmac-sha256:[0-9a-f]{64}$/);
    assert.equal(Object.keys(v).sort(), ['digest', 'shape']);
    if (raw.length >= 4) assert.not.ok(JSON.stringify(v).includes(raw), raw);
  }
});

maker(
  'a string is digested as its UTF-8 bytes, a lone surrogate as U+FFFD, the same as the bytes given raw',
  async () => {
    const { createHmac } = await import('node:crypto');
    const key = Buffer.alloc(32, 7);
    const safe = createSafeValueMaker(key);
    for (const raw of ['pässwörd\u{1F600}', 'a\uD800b', '\uDC00', 'x\uD83D', '']) {
      const bytes = Buffer.from(raw, 'utf8');
      const expected = 'hmac-sha256:' + createHmac('sha256', key).update(bytes).digest('hex');
      assert.is(safe(raw).digest, expected, JSON.stringify(raw));
      assert.is(safe(bytes).digest, expected, JSON.stringify(raw));
    }
    // U+FFFD's bytes, not the surrogate's (which no UTF-8 text holds).
    assert.is(safe('\uD800').digest, safe('\uFFFD').digest);
  },
);

maker('the digest is not a plain sha256 of the value', async () => {
  const { createHash } = await import('node:crypto');
  const v = createSafeValueMaker()('hunter2');
  assert.is.not(v.digest.slice('hmac-sha256:'.length), createHash('sha256').update('hunter2').digest('hex'));
});

maker.run();

const labels = suite('container labels kept');

labels('a credential by key or by form is kept as its shape; what names things stays as written', () => {
  const kept = keptLabels({
    'traefik.http.middlewares.admin.basicauth.users': 'admin:$apr1$x9$Zm9vYmFyYmF6cXV4',
    'com.example.db': 'postgres://app:hunter2@db.internal:5432/app',
    'backup.s3-secret': 'AKIAEXAMPLE/abc',
    'api.token-file': '/run/secrets/api',
    'com.docker.compose.project.config_files': '/srv/app/compose.yaml',
    'org.opencontainers.image.authors': 'Ops <ops@example.org>',
    'mesh.sources': '/etc/mesh/app.env',
    'com.example.homepage': 'https://example.org/app',
    'com.example.author': 'someone',
  });
  assert.is(kept['traefik.http.middlewares.admin.basicauth.users'], `${SECRET_LABEL_PREFIX}<31 chars>)`);
  assert.match(kept['com.example.db']!, /^\(secret, not kept: postgres:\/\/…@db\.internal:5432/);
  assert.ok(kept['backup.s3-secret']!.startsWith(SECRET_LABEL_PREFIX));
  assert.ok(
    kept['api.token-file']!.startsWith(SECRET_LABEL_PREFIX),
    'by its key, even a path: a guess on the safe side',
  );
  assert.not.ok(JSON.stringify(kept).includes('hunter2'));
  assert.not.ok(JSON.stringify(kept).includes('Zm9vYmFy'));
  for (const key of [
    'com.docker.compose.project.config_files',
    'org.opencontainers.image.authors',
    'mesh.sources',
    'com.example.homepage',
    'com.example.author',
  ])
    assert.not.ok(kept[key]!.startsWith(SECRET_LABEL_PREFIX), key);
});

labels('the same for every scan (no per-scan digest): a kept label does not change from night to night', () => {
  const a = keptLabels({ 'app.password': 'one-two-three' });
  const b = keptLabels({ 'app.password': 'one-two-three' });
  assert.equal(a, b);
  assert.is(labelIsSecret('app.passwordless', 'true'), false, 'a key word, not a substring of another word');
});

/** The expression labelIsSecret used to run on values (issue 46): the meaning kept, tried on short values only. */
const URL_PASSWORD_BEFORE = /[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:[^/@\s]+@/i;

labels('a value with scheme://user:password@ anywhere is secret, whatever its key; other values are not', () => {
  for (const value of [
    'postgres://app:hunter2@db.internal:5432/app',
    'redis://:hunter2@cache:6379/0',
    'HTTPS://u:p@x',
    'a://u:p@',
    'x+y.z-1://u:p:q@h',
    'see amqp://guest:guest@rabbit/ for the queue',
    'first http://a/ then git+ssh://me:pw@host/repo',
    '9http://u:p@h',
  ])
    assert.ok(labelIsSecret('com.example.link', value), value);
  for (const value of [
    'https://example.org/app',
    'https://user@example.org/',
    'mailto:ops@example.org',
    'http://u:@h',
    'http://u:p/@h',
    'http://u p:q@h',
    'http://u:p q@h',
    '://u:p@h',
    '1://u:p@h',
    'http:/u:p@h',
    'user:password@host',
    'Ops <ops@example.org>',
    '\u00e9://u:p@h',
    '',
  ])
    assert.not.ok(labelIsSecret('com.example.link', value), value);
});

labels('the URL check means what the expression it replaced meant, character for character', () => {
  for (let c = 0; c < 0x10000; c++) {
    const ch = String.fromCharCode(c);
    for (const value of [`a://u:p${ch}@`, `a://u${ch}:p@`, `${ch}://u:p@`])
      if (labelIsSecret('k', value) !== URL_PASSWORD_BEFORE.test(value)) assert.unreachable(JSON.stringify(value));
  }
  const parts = fc.constantFrom(
    'a',
    'Z',
    '7',
    '+',
    '.',
    '-',
    ':',
    '/',
    '//',
    '://',
    '@',
    ' ',
    '\n',
    '\u3000',
    'é',
    '#',
  );
  fc.assert(
    fc.property(fc.array(parts, { maxLength: 24 }), (chosen) => {
      const value = chosen.join('');
      return labelIsSecret('k', value) === URL_PASSWORD_BEFORE.test(value);
    }),
    { numRuns: 20_000 },
  );
});

labels('a hostile value of 1 MB is read to its end and judged right (it once cost minutes)', () => {
  const MB = 1024 * 1024;
  const hostile: [string, boolean][] = [
    ['a'.repeat(MB), false],
    ['a://' + 'a'.repeat(MB), false],
    ['a://' + ':'.repeat(MB), false],
    ['a://x:'.repeat(MB / 6), false],
    ['://'.repeat(MB / 3), false],
    ['a://x:' + 'y'.repeat(MB), false],
    ['a://x:' + 'y'.repeat(MB) + '@', true],
    ['a'.repeat(MB) + '://u:p@h', true],
    ['a://x:'.repeat(MB / 6) + 'p@', true],
    ['x '.repeat(MB / 2) + 'postgres://app:hunter2@db', true],
  ];
  for (const [value, secret] of hostile) {
    assert.is(labelIsSecret('com.example.blob', value), secret, `${value.slice(0, 12)}… (${value.length} chars)`);
    const kept = keptLabels({ 'com.example.blob': value })['com.example.blob']!;
    assert.is(kept.startsWith(SECRET_LABEL_PREFIX), secret);
  }
});

labels.run();
