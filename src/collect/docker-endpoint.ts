import { MeshAuditError } from '../errors.js';

/** Where the Engine API is, from `--docker-host`, else DOCKER_HOST, else the local socket. */
export interface DockerEndpoint {
  /** As the user would write it, for messages. */
  url: string;
  /** A unix socket on this machine: the only case where /proc can describe its containers. */
  local: boolean;
  socketPath?: string;
  protocol?: 'http' | 'https' | 'ssh';
  host?: string;
  port?: number;
  username?: string;
}

export const DEFAULT_DOCKER_HOST = 'unix:///var/run/docker.sock';

export function resolveEndpoint(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): DockerEndpoint {
  const url = flag ?? env['DOCKER_HOST'] ?? DEFAULT_DOCKER_HOST;
  if (url.startsWith('unix://')) {
    const socketPath = url.slice('unix://'.length);
    if (!socketPath.startsWith('/')) throw new MeshAuditError(`docker host ${url}: a unix socket path must be absolute`);
    return { url, local: true, socketPath };
  }
  if (url.startsWith('/')) return { url: `unix://${url}`, local: true, socketPath: url };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new MeshAuditError(`docker host '${url}' is not a URL (unix:///path, tcp://host:port or ssh://user@host)`);
  }
  const tls = env['DOCKER_TLS_VERIFY'] !== undefined && env['DOCKER_TLS_VERIFY'] !== '' && env['DOCKER_TLS_VERIFY'] !== '0';
  switch (parsed.protocol) {
    case 'tcp:':
    case 'http:':
    case 'https:':
      return {
        url,
        local: false,
        protocol: parsed.protocol === 'https:' || tls ? 'https' : 'http',
        host: parsed.hostname,
        port: Number(parsed.port || (tls ? 2376 : 2375)),
      };
    case 'ssh:':
      return {
        url,
        local: false,
        protocol: 'ssh',
        host: parsed.hostname,
        port: Number(parsed.port || 22),
        ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      };
    default:
      throw new MeshAuditError(`docker host '${url}': unsupported scheme ${parsed.protocol} (unix, tcp, ssh)`);
  }
}
