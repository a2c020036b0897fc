import { readHostListeners } from '../../src/collect/host-listeners.js';
import { endpointText } from '../../src/text/endpoint.js';
import { reachOf } from '../../src/facts/containers.js';

/**
 * This machine's own sockets that no test or benchmark can name the holder of: listening beyond loopback,
 * held by no process whose fds the scan can read (a sandbox's init keeps one on 0.0.0.0, its fds closed
 * even to root). A live scan is rightly incomplete over them; tests and benchmarks leave them out of scope,
 * as an operator would (`listener:ADDRESS:PORT` selectors). Read once, when first asked.
 */
let selectors: string[] | undefined;
export function machineScope(): string[] {
  if (selectors === undefined) {
    const view = readHostListeners();
    selectors = view.available
      ? [
          ...new Set(
            view.sockets
              .filter((s) => s.holder === null && s.holderUnknown !== undefined && reachOf(s.address) !== 'loopback')
              .map((s) => `listener:${endpointText(s.address, s.port)}`),
          ),
        ]
      : [];
  }
  return selectors;
}

/** `--exclude SELECTOR` for each of machineScope(). */
export const machineScopeArgs = (): string[] => machineScope().flatMap((s) => ['--exclude', s]);
