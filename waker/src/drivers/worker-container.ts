/**
 * A persona's worker in a container, as the docker and the Swarm drivers run it alike: the port
 * it listens on, where its folder is, the shared memory Chromium gets and how long it has to
 * close its browser when asked to stop.
 */
export const WORKER_PORT = 5000;
/** The labels that find a fleet's containers and services again after a restart. */
export const PERSONA_LABEL = 'persona-browser.persona';
export const FLEET_LABEL = 'persona-browser.fleet';
export const STOP_TIMEOUT_S = 20;
export const SHM_BYTES = 512 * 1024 * 1024;

/** The variables the driver sets for the worker, on top of the fleet's and the persona's. */
export function containerEnv(persona: string, wakerUrl: string): Record<string, string> {
  return {
    HOST: '0.0.0.0',
    PORT: String(WORKER_PORT),
    PERSONA_DIR: '/persona',
    // The folder is /persona inside: the name ping reports.
    PERSONA_NAME: persona,
    REPO_ROOT: '/app',
    WAKER_URL: wakerUrl,
  };
}

/** The folder of the GPUs' device nodes, passed into a container whose persona sets `GPU=dri`. */
export const DRI_DEVICE = '/dev/dri';

/**
 * The devices a persona's container is given: the render node's folder when its environment
 * asks for hardware GL (`GPU=dri` in persona.env or the fleet's .env), else none.
 */
export function containerDevices(
  env: Readonly<Record<string, string>>,
): Array<{ PathOnHost: string; PathInContainer: string; CgroupPermissions: string }> {
  return env.GPU === 'dri'
    ? [{ PathOnHost: DRI_DEVICE, PathInContainer: DRI_DEVICE, CgroupPermissions: 'rwm' }]
    : [];
}
