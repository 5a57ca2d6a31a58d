import fs from 'node:fs';

/**
 * Inside a container, 127.0.0.1 and localhost are the container itself, not the machine it runs
 * on: a person who starts a site on the host and navigates to http://127.0.0.1:8080/ gets a
 * refused connection with no clue why. The waker names the host `host.docker.internal` in every
 * persona container (its Docker driver adds the host-gateway entry); the failed navigation says
 * so.
 */

/** Files container engines leave at the root of every container (Docker, Podman). */
const CONTAINER_MARKERS = ['/.dockerenv', '/run/.containerenv'];
const HOST_NAME = 'host.docker.internal';

/**
 * Whether this process runs in a container that knows the host as host.docker.internal (an
 * entry of its /etc/hosts, as the waker's persona containers have): only there is the hint
 * both needed and true. A development container without that entry gets no hint.
 */
export function hostKnownByName(
  hostsFile = '/etc/hosts',
  markers: readonly string[] = CONTAINER_MARKERS,
): boolean {
  if (!markers.some((f) => fs.existsSync(f))) return false;
  try {
    return fs
      .readFileSync(hostsFile, 'utf8')
      .split('\n')
      .some((line) => line.replace(/#.*/, '').trim().split(/\s+/).slice(1).includes(HOST_NAME));
  } catch {
    return false;
  }
}

/** The host name of `url` when it names this machine's loopback, else null. */
function loopbackHost(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
  const loopback =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    host === '[::1]' ||
    host === '0.0.0.0';
  return loopback ? host : null;
}

/**
 * What to add to a failed navigation's message: inside a container, for a loopback address,
 * where a site on the host really is (with the URL to use); otherwise nothing.
 */
export function loopbackHint(url: string, inPersonaContainer = hostKnownByName()): string {
  const host = inPersonaContainer ? loopbackHost(url) : null;
  if (host === null) return '';
  const onHost = new URL(url);
  onHost.hostname = HOST_NAME;
  return (
    ` — inside a container ${host} is the container itself; a site on the host is reached at ` +
    `${HOST_NAME} (${onHost.href}), and must listen on an address the container reaches ` +
    '(0.0.0.0 or the Docker bridge), not on 127.0.0.1 alone'
  );
}
