import type { WakerConfig } from '../config';
import type { Logger } from '@persona-browser/service-kit';
import { DockerDriver } from './docker';
import { ProcessDriver } from './process';
import { SwarmDriver } from './swarm';
import type { RuntimeDriver } from './types';

export type { RuntimeDriver } from './types';

/** The driver WAKER_DRIVER names; a new runtime (Swarm, Kubernetes) is one more case here. */
export async function createDriver(config: WakerConfig, logger: Logger): Promise<RuntimeDriver> {
  switch (config.driver) {
    case 'docker':
      return DockerDriver.create({
        fleetId: config.fleetId,
        image: config.image,
        repoRoot: config.repoRoot,
        wakerPort: config.port,
        logger,
      });
    case 'swarm':
      return SwarmDriver.create({
        fleetId: config.fleetId,
        image: config.image,
        repoRoot: config.repoRoot,
        wakerPort: config.port,
        logger,
        network: config.swarm.network,
        dataDir: config.swarm.dataDir,
      });
    case 'process':
      return new ProcessDriver({
        fleetId: config.fleetId,
        command: ProcessDriver.defaultCommand(config.repoRoot),
        wakerPort: config.port,
        logger,
      });
  }
}
