/**
 * Who may ask the viewer: only this machine, by the name it was given. The server listens on
 * 127.0.0.1 alone; the checks here hold even so, because a browser on this machine can be made to
 * send a page's requests to 127.0.0.1 under another site's name (DNS rebinding): such a request
 * carries that site's name in its Host header and is refused.
 */

/** Loopback addresses as node reports the peer of a socket bound to 127.0.0.1. */
const LOCAL_PEERS = new Set(['127.0.0.1', '::ffff:127.0.0.1']);

/** Whether the peer is 127.0.0.1 itself (not another address of the loopback range, not a remote host). */
export function isLocalPeer(remoteAddress: string | undefined): boolean {
  return remoteAddress !== undefined && LOCAL_PEERS.has(remoteAddress);
}

/** Whether the Host header names this server as the viewer printed it: `127.0.0.1:<port>` or `localhost:<port>`. */
export function isOwnHost(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  return host === `127.0.0.1:${port}` || host.toLowerCase() === `localhost:${port}`;
}

/** Why a request is refused, or undefined when it may be answered. */
export function refusal(remoteAddress: string | undefined, host: string | undefined, port: number): string | undefined {
  if (!isLocalPeer(remoteAddress)) return 'the viewer answers requests from 127.0.0.1 only';
  if (!isOwnHost(host, port)) return `the viewer answers requests for 127.0.0.1:${port} or localhost:${port} only (Host header)`;
  return undefined;
}
