import { MeshAuditError } from '../errors.js';
import { NotRegularFile, readRegularInput } from '../input/read.js';
import { DEFAULT_TIMEOUT_MS, type AlertmanagerTarget } from './alertmanager.js';

/**
 * The `alertmanager` section of the config file. Credentials come from here or from the environment,
 * never from the command line (every user sees a command line in the process list, and logs keep it).
 */
export interface AlertmanagerSettings {
  url?: string;
  username?: string;
  password?: string;
  passwordFile?: string;
  bearerToken?: string;
  bearerTokenFile?: string;
  timeoutSeconds?: number;
}

/** The environment variables that carry credentials (systemd's EnvironmentFile=, a secret store's injection). */
export const ALERTMANAGER_ENV = {
  username: 'MESH_AUDIT_ALERTMANAGER_USERNAME',
  password: 'MESH_AUDIT_ALERTMANAGER_PASSWORD',
  bearerToken: 'MESH_AUDIT_ALERTMANAGER_BEARER_TOKEN',
} as const;

const SECRET_KEYS = ['password', 'bearerToken'] as const;

/** The settings as `config show` prints them: a credential given in the file is shown as set, never its value. */
export function shownAlertmanagerSettings(
  settings: AlertmanagerSettings | undefined,
): AlertmanagerSettings | undefined {
  if (settings === undefined) return undefined;
  const shown = { ...settings };
  for (const key of SECRET_KEYS) if (shown[key] !== undefined) shown[key] = '(set, not shown)';
  if (shown.url !== undefined) shown.url = redactUrlText(shown.url);
  return shown;
}

/** A URL as typed, with anything between `//` and `@` hidden (it may not even parse). */
const redactUrlText = (text: string): string => text.replace(/\/\/[^/?#]*@/, '//***@');

/** A secret read from a file: the file's text less one final line break. */
async function secretFile(path: string, what: string): Promise<string> {
  let text: string;
  try {
    text = (await readRegularInput(path)).toString('utf8');
  } catch (err) {
    if (err instanceof NotRegularFile) throw new MeshAuditError(`${path}: cannot read the ${what}: it ${err.message}`);
    throw new MeshAuditError(`${path}: cannot read the ${what} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return text.replace(/\r?\n$/, '');
}

const env = (environment: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = environment[name];
  return value === undefined || value === '' ? undefined : value;
};

/**
 * Where alerts go and how to authenticate, from `--alertmanager URL` (over the config's `url`), the
 * config's credentials, and the environment's (over the config's). Undefined when no URL is given.
 * Every mistake is a usage error (exit 2) found before anything is read, and no message shows a
 * credential: a URL with a user or password in it is refused, shown as `//***@`.
 */
export async function alertmanagerTargetOf(
  flagUrl: string | undefined,
  settings: AlertmanagerSettings | undefined,
  environment: NodeJS.ProcessEnv,
  configFile?: string,
): Promise<AlertmanagerTarget | undefined> {
  const config = settings ?? {};
  const text = flagUrl ?? config.url;
  if (text === undefined) return undefined;
  const named = flagUrl !== undefined ? '--alertmanager' : `${configFile ?? 'config'}: alertmanager.url`;
  const url = alertmanagerUrlOf(text, named);
  const auth = await alertmanagerAuthOf(config, environment, configFile);
  const timeoutMs = config.timeoutSeconds !== undefined ? config.timeoutSeconds * 1000 : DEFAULT_TIMEOUT_MS;
  return auth === undefined ? { url, timeoutMs } : { url, auth, timeoutMs };
}

/** The base URL of Alertmanager as typed, checked: http(s), no credentials, no ?query or #fragment. */
function alertmanagerUrlOf(text: string, named: string): URL {
  const refuse = (why: string): never => {
    throw new MeshAuditError(`${named} ${redactUrlText(text)}: ${why}`);
  };
  const notHttp = (): never => {
    throw new MeshAuditError(
      `${named} needs an http:// or https:// URL of Alertmanager (e.g. http://127.0.0.1:9093), not ` +
        `'${redactUrlText(text)}'`,
    );
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return notHttp();
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') notHttp();
  if (url.username !== '' || url.password !== '') {
    refuse(
      `credentials in the URL are refused: a command line is seen by every user and kept by logs. Give them in the ` +
        `config file (alertmanager: username and passwordFile, or bearerTokenFile) or in ` +
        `$${ALERTMANAGER_ENV.password} / $${ALERTMANAGER_ENV.bearerToken}`,
    );
  }
  if (url.search !== '' || url.hash !== '') refuse('takes the base URL of Alertmanager (no ?query or #fragment)');
  return url;
}

/** Bearer or basic auth (the environment's over the config's, secret files read), or none; never both. */
async function alertmanagerAuthOf(
  config: AlertmanagerSettings,
  environment: NodeJS.ProcessEnv,
  configFile: string | undefined,
): Promise<AlertmanagerTarget['auth']> {
  for (const [a, b] of [
    ['password', 'passwordFile'],
    ['bearerToken', 'bearerTokenFile'],
  ] as const) {
    if (config[a] !== undefined && config[b] !== undefined)
      throw new MeshAuditError(`${configFile ?? 'config'}: alertmanager has both ${a} and ${b}; choose one`);
  }
  const username = env(environment, ALERTMANAGER_ENV.username) ?? config.username;
  const password =
    env(environment, ALERTMANAGER_ENV.password) ??
    config.password ??
    (config.passwordFile !== undefined ? await secretFile(config.passwordFile, 'Alertmanager password') : undefined);
  const token =
    env(environment, ALERTMANAGER_ENV.bearerToken) ??
    config.bearerToken ??
    (config.bearerTokenFile !== undefined
      ? await secretFile(config.bearerTokenFile, 'Alertmanager bearer token')
      : undefined);
  if (token !== undefined && (username !== undefined || password !== undefined)) {
    throw new MeshAuditError(
      'Alertmanager: both a bearer token and basic auth (username/password) are given; choose one',
    );
  }
  if (token !== undefined) return bearerAuth(token);
  if (username === undefined && password === undefined) return undefined;
  return basicAuth(username, password);
}

function bearerAuth(token: string): AlertmanagerTarget['auth'] {
  // RFC 6750's b64token: anything else would not make a valid header (and fetch's error would quote it).
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token))
    throw new MeshAuditError(
      'Alertmanager bearer token: not a valid token (letters, digits and -._~+/ then optional =; one line)',
    );
  return { kind: 'bearer', token };
}

/** Basic auth needs both parts, each fit for the `user:password` of an Authorization header. */
function basicAuth(username: string | undefined, password: string | undefined): AlertmanagerTarget['auth'] {
  if (username === undefined || password === undefined) {
    throw new MeshAuditError(
      'Alertmanager basic auth needs both a username and a password (' +
        (username === undefined
          ? `alertmanager.username or $${ALERTMANAGER_ENV.username}`
          : `alertmanager.password, passwordFile or $${ALERTMANAGER_ENV.password}`) +
        ' is missing)',
    );
  }
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  const control = /[\u0000-\u001f\u007f]/;
  if (username.includes(':') || control.test(username))
    throw new MeshAuditError('Alertmanager username: may not hold a colon or a control character');
  if (control.test(password))
    throw new MeshAuditError(
      'Alertmanager password: may not hold a control character (a line break in the password file other than ' +
        'the last?)',
    );
  return { kind: 'basic', username, password };
}
