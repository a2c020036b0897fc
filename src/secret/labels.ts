import { shapeOf } from './value.js';

/**
 * A container's labels are kept as written: rules, scope selectors and the mesh's own labels (module,
 * sources, Compose's) read them. A label that carries a credential — by its key (`…password`,
 * `…basicauth.users`, `…api-key`, `…token`) or by its form (a URL with a password) — is kept as its
 * shape only (src/secret/value.ts, shapeOf), the same for every scan, so a change of length or form
 * still shows and the secret never reaches a snapshot or report. Networks', volumes' and images' labels
 * are secret-safe values already (src/collect/engine-objects.ts, images.ts).
 */
const SECRET_WORDS = [
  'pass',
  'passwd',
  'password',
  'passphrase',
  'secret',
  'secrets',
  'token',
  'apikey',
  'api[._-]key',
  'private[._-]key',
  'credentials?',
  'auth',
  'basicauth',
  'digestauth',
];
/** One of the words, whole, between the separators keys use (`traefik.http.middlewares.x.basicauth.users`). */
const SECRET_KEY = new RegExp(`(^|[._/-])(${SECRET_WORDS.join('|')})([._/-]|$)`, 'i');
/**
 * `scheme://user:password@` anywhere in the value (a password, however short). A scheme is a letter, then
 * letters, digits, `+`, `.`, `-`; it is matched from its last letter, which finds the same values as
 * `[a-z][a-z0-9+.-]*` but in linear time: that form, unanchored, read the rest of a run of letters again
 * from each one, and a label of 120 kB cost ten seconds (issue 46; test/unit/secret.test.ts checks the two
 * agree). After `://`, user and password stop at the next `/`, so each character is read a few times.
 */
const URL_PASSWORD = /[a-z][0-9+.-]*:\/\/[^/@\s:]*:[^/@\s]+@/i;
/** Keys whose values name things and are never credentials. */
const NAMING_PREFIXES = ['com.docker.compose.', 'org.opencontainers.image.', 'org.label-schema.'];

export const SECRET_LABEL_PREFIX = '(secret, not kept: ';

export function labelIsSecret(key: string, value: string): boolean {
  if (NAMING_PREFIXES.some((p) => key.startsWith(p))) return false;
  return SECRET_KEY.test(key) || URL_PASSWORD.test(value);
}

/** The labels as a snapshot keeps them. */
export function keptLabels(labels: Readonly<Record<string, string>> | null | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (typeof value !== 'string') continue;
    kept[key] = labelIsSecret(key, value) ? `${SECRET_LABEL_PREFIX}${shapeOf(value)})` : value;
  }
  return kept;
}
