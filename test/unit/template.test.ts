import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { placeholders, renderTemplate } from '../../src/policy/template.js';
import { createSafeValueMaker } from '../../src/secret/value.js';

const safe = createSafeValueMaker();
const url = safe('postgresql://gitea:hunter2@:20000/gitea');
const token = safe('tok-0123456789');

// ---------------------------------------------------------------- placeholders

const ph = suite('placeholders');

ph('lists names and dotted paths in order', () => {
  assert.equal(placeholders('{container.name} holds {item}={held} from {source.path}'), [
    'container.name',
    'item',
    'held',
    'source.path',
  ]);
});

ph('escaped braces are not placeholders', () => {
  assert.equal(placeholders('{{literal}} and }} and {{ but {real}'), ['real']);
  assert.equal(placeholders('no placeholders at all'), []);
});

ph('text that is not a valid name is not a placeholder', () => {
  assert.equal(placeholders('{1abc} { spaced } {} {ok_1-x.y}'), ['ok_1-x.y']);
});

ph.run();

// ---------------------------------------------------------------- renderTemplate

const render = suite('renderTemplate');

render('fills names and dotted paths, including keys that contain dots', () => {
  const data = { name: 'gitea', labels: { 'mesh.module': 'git' }, state: { status: 'running' } };
  assert.is(renderTemplate('{name} [{labels.mesh.module}] is {state.status}', data), 'gitea [git] is running');
});

render('{{ and }} render as literal braces', () => {
  assert.is(renderTemplate('{{name}} is {name}; }}{{', { name: 'x' }), '{name} is x; }{');
});

render('a {digest, shape} value renders as its shape, never its digest', () => {
  const out = renderTemplate('DATABASE_URL={held}', { held: url });
  assert.is(out, `DATABASE_URL=${url.shape}`);
  assert.is(out, 'DATABASE_URL=postgresql://…@:20000/…');
  assert.not.ok(out.includes(url.digest), out);
  assert.not.ok(out.includes('hmac-sha256'), out);
  assert.not.ok(out.includes('hunter2'), out);
});

render('a safe value nested in an object renders as its shape', () => {
  const out = renderTemplate('{env}', { env: { DATABASE_URL: url, TOKEN: token } });
  assert.ok(out.includes(url.shape), out);
  assert.ok(out.includes(token.shape), out);
  assert.not.ok(out.includes(url.digest), out);
  assert.not.ok(out.includes(token.digest), out);
  assert.not.ok(out.includes('hmac-sha256'), out);
});

render('a safe value in an array, or in an object in an array, renders as its shape', () => {
  const out = renderTemplate('{list} / {rows}', {
    list: [url, token],
    rows: [{ key: 'A', value: token }, { deep: { v: url } }],
  });
  assert.ok(out.startsWith(`${url.shape}, ${token.shape} / `), out);
  assert.ok(out.includes(`value=${token.shape}`), out);
  assert.not.ok(out.includes('hmac-sha256'), out);
});

render('null, missing and empty list render as -', () => {
  assert.is(renderTemplate('{a}|{b}|{d}|{e.f.g}', { a: null, d: [] }), '-|-|-|-');
});

render('an empty string renders as nothing (MA1001 appends an optional {same_shape} that way)', () => {
  assert.is(renderTemplate('x={held}{same_shape}', { held: 'v', same_shape: '' }), 'x=v');
});

render('0 and false are values, not missing', () => {
  assert.is(renderTemplate('{n} {f}', { n: 0, f: false }), '0 false');
});

render('lists render comma-separated', () => {
  assert.is(renderTemplate('ports {ports}', { ports: [2999, 2222] }), 'ports 2999, 2222');
});

render('inherited properties are not reachable', () => {
  assert.is(renderTemplate('{constructor} {name.toUpperCase} {n.toFixed}', { name: 'abc', n: 1 }), '- - -');
});

render("a string's own properties are reachable, as in rules: {name.length}", () => {
  assert.is(renderTemplate('{name.length} {name.0}', { name: 'abc' }), '3 a');
});

render.run();
