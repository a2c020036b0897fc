/**
 * How a listening socket is written everywhere (subject ids, notes, `listener:` selectors):
 * `ADDRESS:PORT/PROTOCOL`, an IPv6 address in brackets (`[::]:22/tcp6`); without the protocol when none is given.
 */
export const endpointText = (address: string, port: number, protocol?: string): string =>
  `${address.includes(':') ? `[${address}]` : address}:${port}${protocol === undefined ? '' : `/${protocol}`}`;

/** `ADDRESS:PORT` of an `ADDRESS:PORT/PROTOCOL`. */
export const withoutProtocol = (endpoint: string): string => endpoint.replace(/\/[a-z0-9]+$/, '');
