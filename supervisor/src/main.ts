import path from 'node:path';
import { Lifecycle, SecretValues, createLogger, fatal } from '@persona-browser/service-kit';
import { loadSupervisorConfig } from './config';
import type { SupervisorConfig } from './config';
import { Git } from './git';
import { PersonaImage } from './image';
import { UpdateLog } from './log';
import { Preparer } from './prepare';
import { checkoutOwner } from './run';
import { createStatusServer } from './server';
import { StateFile } from './state';
import { Supervisor } from './supervisor';

const PROGRAM = 'persona-browser supervisor';

async function main(): Promise<void> {
  let config: SupervisorConfig;
  try {
    config = loadSupervisorConfig(process.env, path.resolve(__dirname, '..', '..'));
  } catch (err) {
    fatal(PROGRAM, err instanceof Error ? err.message : String(err));
  }
  const secrets = new SecretValues([config.serviceKey]);
  const logger = createLogger({ secrets, service: 'supervisor' });
  const log = new UpdateLog(logger, secrets);
  const life = new Lifecycle(PROGRAM, logger);
  const owner = checkoutOwner(config.repoRoot);
  const git = new Git(config.repoRoot, owner);
  const state = new StateFile(config.stateDir, owner);
  const image = config.docker
    ? new PersonaImage(config.repoRoot, config.docker.image, config.docker.baseImage)
    : null;
  const supervisor = new Supervisor({
    config,
    git,
    state,
    log,
    preparer: new Preparer(
      config.repoRoot,
      state,
      log,
      image,
      owner,
      config.docker?.registry ?? null,
    ),
    onWakerLine: (line) => process.stdout.write(`${line}\n`),
  });
  // Stopped last: the waker, and with it every persona.
  life.onStop('supervisor', () => supervisor.stop());

  const server = createStatusServer(() => supervisor.status(), config.serviceKey);
  await life.listen(server, config.port);
  logger.info('listening', {
    port: config.port,
    repo: config.repoRoot,
    update_interval_s: config.updateIntervalS,
    health_timeout_s: config.healthTimeoutS,
    image: config.docker?.image ?? null,
    registry: config.docker?.registry ?? null,
  });
  life.exitOnSignals(['SIGTERM', 'SIGINT']);
  process.on('unhandledRejection', (err) => logger.error('unhandled rejection', { err }));

  // The checkout cannot be read (git fails on it): nothing can be run or updated.
  await life.step('updates', () => supervisor.start());
}

void main();
