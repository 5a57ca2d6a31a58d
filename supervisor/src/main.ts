import path from 'node:path';
import { ConfigError, loadSupervisorConfig } from './config';
import type { SupervisorConfig } from './config';
import { Git } from './git';
import { PersonaImage } from './image';
import { UpdateLog, createLogger } from './log';
import { Preparer } from './prepare';
import { checkoutOwner } from './run';
import { createStatusServer } from './server';
import { StateFile } from './state';
import { Supervisor } from './supervisor';

function fatal(message: string): never {
  process.stderr.write(`persona-browser supervisor: ${message}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let config: SupervisorConfig;
  try {
    config = loadSupervisorConfig(process.env, path.resolve(__dirname, '..', '..'));
  } catch (err) {
    if (err instanceof ConfigError) fatal(err.message);
    throw err;
  }
  const logger = createLogger();
  const log = new UpdateLog(logger);
  const owner = checkoutOwner(config.repoRoot);
  const git = new Git(config.repoRoot, owner);
  const state = new StateFile(config.stateDir, owner);
  const image = config.docker
    ? new PersonaImage(config.repoRoot, git, config.docker.image, config.docker.baseImage)
    : null;
  const supervisor = new Supervisor({
    config,
    git,
    state,
    log,
    preparer: new Preparer(config.repoRoot, state, log, image, owner),
    onWakerLine: (line) => process.stdout.write(`${line}\n`),
  });

  const server = createStatusServer(() => supervisor.status(), config.serviceKey);
  await new Promise<void>((resolve) => {
    server.once('listening', resolve);
    server.once('error', (err) => fatal(`cannot listen on port ${config.port}: ${err.message}`));
    server.listen(config.port);
  });
  logger.info('listening', {
    port: config.port,
    repo: config.repoRoot,
    update_interval_s: config.updateIntervalS,
    health_timeout_s: config.healthTimeoutS,
    image: config.docker?.image ?? null,
  });

  let stopping = false;
  const shutdown = async (reason: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { reason });
    server.close();
    await supervisor.stop();
    logger.info('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => void shutdown(signal));
  }
  process.on('unhandledRejection', (err) => logger.error('unhandled rejection', { err }));

  try {
    await supervisor.start();
  } catch (err) {
    // The checkout cannot be read (git fails on it): nothing can be run or updated.
    logger.error('cannot start', { error: (err as Error).message });
    await supervisor.stop();
    fatal((err as Error).message);
  }
}

void main();
