import { MeshAuditError } from '../errors.js';

/**
 * Where the Engine API is: `--docker-host` (or the config file's `dockerHost`), else DOCKER_HOST,
 * else the local socket. Read with docker-modem's own rules (node_modules/docker-modem/lib/modem.js,
 * `defaultOpts`) so that a DOCKER_HOST means here what it means to every dockerode tool — `unix://`
 * path, `host:port` without a scheme is tcp, TLS with DOCKER_TLS_VERIFY or port 2376, ssh with its
 * user — minus two of its slips: an IPv6 literal loses its brackets (`tcp://[::1]:2375` connects to
 * ::1), and a missing port is the engine's (2375, or 2376 with TLS and for `https://`), not port 80.
 */
export interface DockerEndpoint {
  /** As the user would write it, for messages. */
  url: string;
  /** A unix socket on this machine: the only case where /proc can describe its containers. */
  local: boolean;
  socketPath?: string;
  protocol?: 'http' | 'https' | 'ssh';
  /** A host name or an IP address, an IPv6 literal without its brackets. */
  host?: string;
  port?: number;
  username?: string;
}

export const DEFAULT_DOCKER_HOST = 'unix:///var/run/docker.sock';

/** The docker CLI's reading of DOCKER_TLS_VERIFY: set and not empty means yes (`0` too is refused here as no). */
function tlsVerify(env: NodeJS.ProcessEnv): boolean {
  const v = env['DOCKER_TLS_VERIFY'];
  return v !== undefined && v !== '' && v !== '0';
}

/** `chosen`: the resolved `dockerHost` setting, DOCKER_HOST included (src/config.ts is its one reader). */
export function resolveEndpoint(chosen: string | undefined, env: NodeJS.ProcessEnv = process.env): DockerEndpoint {
  const url = chosen ?? DEFAULT_DOCKER_HOST;
  if (url.startsWith('unix://')) {
    const socketPath = url.slice('unix://'.length) || DEFAULT_DOCKER_HOST.slice('unix://'.length);
    if (!socketPath.startsWith('/'))
      throw new MeshAuditError(`docker host ${url}: a unix socket path must be absolute`);
    return { url, local: true, socketPath };
  }
  if (url.startsWith('/')) return { url: `unix://${url}`, local: true, socketPath: url };
  let parsed: URL;
  try {
    // As docker-modem: `host:port` alone is tcp.
    parsed = new URL(url.includes('//') ? url : `tcp://${url}`);
  } catch {
    throw new MeshAuditError(`docker host '${url}' is not a URL (unix:///path, tcp://host:port or ssh://user@host)`);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new MeshAuditError(`docker host '${url}' names no host`);
  switch (parsed.protocol) {
    case 'tcp:':
    case 'http:':
    case 'https:': {
      const tls = parsed.protocol === 'https:' || tlsVerify(env) || parsed.port === '2376';
      return {
        url,
        local: false,
        protocol: tls ? 'https' : 'http',
        host,
        port: Number(parsed.port || (tls ? 2376 : 2375)),
      };
    }
    case 'ssh:':
      return {
        url,
        local: false,
        protocol: 'ssh',
        host,
        port: Number(parsed.port || 22),
        ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      };
    default:
      throw new MeshAuditError(`docker host '${url}': unsupported scheme ${parsed.protocol} (unix, tcp, ssh)`);
  }
}
