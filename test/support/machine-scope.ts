import { readHostListeners } from '../../src/collect/host-listeners.js';
import { endpointText } from '../../src/text/endpoint.js';
import { reachOf } from '../../src/facts/containers.js';

/**
 * This machine's own sockets listening beyond loopback before any test made one: sshd on 0.0.0.0:22, a web
 * server on [::]:80, a sandbox's init on 0.0.0.0:2024 (its fds closed even to root). None is a test's, and
 * every live scan would rightly report them (MA2009 of an undeclared host listener; the run incomplete where
 * the holder cannot be read). Tests and benchmarks judge only what they made: they leave these out of scope,
 * as an operator would (`listener:ADDRESS:PORT` selectors, src/scope.ts), and still find every socket of their
 * own, on other ports. Read once, when first asked: test/uvu-each.mjs asks before any test file is imported,
 * test/support/realistic-live.ts before it starts its containers.
 */
let selectors: string[] | undefined;
export function machineScope(): string[] {
  if (selectors === undefined) {
    const view = readHostListeners();
    selectors = view.available
      ? [
          ...new Set(
            view.sockets
              .filter((s) => reachOf(s.address) !== 'loopback')
              .map((s) => `listener:${endpointText(s.address, s.port)}`),
          ),
        ]
      : [];
  }
  return selectors;
}

/** `--exclude SELECTOR` for each of machineScope(). */
export const machineScopeArgs = (): string[] => machineScope().flatMap((s) => ['--exclude', s]);
