import { ROOT } from './root';
import type { RunningWaker } from './waker';
import { makePersonas, startWaker } from './waker';

/** A fleet the tests and benchmarks start: which driver, which personas, what else it is told. */
export interface FleetSetup {
  driver: 'process' | 'docker' | 'swarm';
  /** FLEET_ID: names the fleet's containers, services or processes. */
  fleet: string;
  /** The waker's own port. */
  port: number;
  /** `{name: persona.env text or null}`, written into a scratch personas folder. */
  personas: Record<string, string | null>;
  /** PERSONA_IMAGE, for the docker and swarm drivers. */
  image?: string;
  /** Any further settings of the waker (they win over the ones above). */
  env?: Record<string, string>;
}

export interface StartedFleet {
  waker: RunningWaker;
  /** The environment the waker was started with, to start it again the same way. */
  env: Record<string, string>;
  root: string;
  personasDir: string;
}

/** The waker's environment over `personasDir`; the workers run this checkout's build. */
export function fleetEnv(
  setup: Omit<FleetSetup, 'personas'>,
  personasDir: string,
): Record<string, string> {
  return {
    WAKER_DRIVER: setup.driver,
    WAKER_PORT: String(setup.port),
    PERSONAS_DIR: personasDir,
    FLEET_ID: setup.fleet,
    REPO_ROOT: ROOT,
    ...(setup.image === undefined ? {} : { PERSONA_IMAGE: setup.image }),
    ...setup.env,
  };
}

/** Writes the personas into a scratch root and starts the built waker over them. */
export async function startFleet(setup: FleetSetup): Promise<StartedFleet> {
  const { root, personasDir } = makePersonas(setup.personas);
  const env = fleetEnv(setup, personasDir);
  return { waker: await startWaker(env), env, root, personasDir };
}
