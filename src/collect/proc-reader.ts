import { keptLabels } from '../secret/labels.js';
import type { Problem, ProcView } from '../snapshot/types.js';
import type { CollectContext, Collector } from './contract.js';
import { isolated } from './contract.js';
import type { ContainerInspect } from './inspect.js';
import {
  hasChildrenFiles,
  processSignature,
  procUnavailableReason,
  readProcessTable,
  readProcView,
  type ProcessTable,
} from './proc.js';
import type { ProcNetRow } from './proc-net.js';

/** How each inspected container's /proc is read, when it can be (what the engine's collector is handed). */
export interface ProcReader {
  read: (inspect: ContainerInspect) => Promise<ProcView>;
  /** Starts the one read of the process table, while the engine lists the containers. */
  readProcessTable: () => void;
  /** The signature of a container's processes (processSignature), through this read's one process table. */
  signature: (pid: number) => Promise<string | null>;
}

/** Whether /proc shows the containers' processes (null: it does), and the reader when it does. */
export interface ProcPart {
  reason: string | null;
  reader?: ProcReader;
}

/**
 * The /proc collector (src/collect/contract.ts): whether this scan can read the containers' processes, and the
 * reader the engine's collector reads each container's /proc through. Its problems grow while that reader is used:
 * one container's /proc that fails unexpectedly is a problem of its own (src/scan.ts joins them after the engine's
 * collection).
 */
export const procCollector: Collector<CollectContext, ProcPart> = {
  async collect({ endpoint, settings, safe, scope }) {
    const reason = await procUnavailableReason({ endpointIsLocalSocket: endpoint.local });
    if (reason !== null) return { part: { reason }, problems: [], notes: [procNote(reason)] };
    const problems: Problem[] = [];
    return { part: { reason, reader: procReaderFor(settings.root, safe, scope, problems) }, problems, notes: [] };
  },
  unread: (_context, reason) => ({
    part: { reason },
    problems: [{ source: 'proc', message: `whether /proc shows the containers' processes not known: ${reason}` }],
    notes: [procNote(reason)],
  }),
};

function procNote(reason: string): Problem {
  return {
    source: 'proc',
    message:
      `container processes not read from /proc: ${reason}; env, sockets and bind-mounted files as ` +
      `containers see them, and the host's listening sockets, were not read: the rules on them are not checked`,
  };
}

/**
 * The /proc reader for each inspected container. One read of the process table serves all containers
 * (made while the engine lists them, or on the first running one), and one read of each network
 * namespace's socket tables. Bind-mount sources that are regular files are what /proc compares; known
 * only after inspect, so the proc reader checks the kind itself through the host root.
 */
function procReaderFor(
  hostRoot: string,
  safe: CollectContext['safe'],
  scope: CollectContext['scope'],
  problems: Problem[],
): ProcReader {
  let processTable: Promise<ProcessTable> | undefined;
  const sharedProcessTable = (): Promise<ProcessTable> => (processTable ??= readProcessTable());
  const netTables = new Map<string, Promise<ProcNetRow[]>>();
  return {
    // A failure is each container's, when it asks.
    // Where the kernel has children files, each tree is read from them and the table is never needed.
    readProcessTable: () => (hasChildrenFiles('/proc') ? undefined : void sharedProcessTable().catch(() => undefined)),
    signature: (pid) => processSignature(pid, '/proc', sharedProcessTable),
    // One container's /proc failing unexpectedly is that container's: its /proc facts unknown, the others read.
    read: (inspect) =>
      isolated(
        () => readProcOf(inspect),
        (reason) => {
          const name = inspect.Name.replace(/^\//, '');
          problems.push({ source: 'proc', subject: name, message: `${name}: its /proc not read: ${reason}` });
          return { available: false, reason: `its /proc not read: ${reason}` };
        },
      ),
  };
  function readProcOf(inspect: ContainerInspect): Promise<ProcView> {
    return scope && !scope.container(inspect.Name.replace(/^\//, ''), keptLabels(inspect.Config?.Labels))
      ? Promise.resolve({ available: false, reason: 'out of scope: not read' })
      : readProcView(
          {
            id: inspect.Id,
            running: inspect.State?.Running ?? false,
            pid: inspect.State?.Pid ?? 0,
            mounts: (inspect.Mounts ?? []).map((m) => ({
              type: m.Type ?? '',
              source: m.Source ?? '',
              destination: m.Destination ?? '',
            })),
          },
          new Set((inspect.Mounts ?? []).filter((m) => m.Type === 'bind' && m.Source).map((m) => m.Source!)),
          { hostRoot, safe, processTable: sharedProcessTable, netTables },
        );
  }
}
