import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp, defaultStaticDirs } from './api/app';
import { readCommit } from '@persona-browser/contracts';
import { ConfigError, loadWakerConfig } from './config';
import type { WakerConfig } from './config';
import { createDriver } from './drivers';
import { Fleet } from './fleet';
import { createLogger } from './log';
import { MetricsSampler, requestsPerHour } from './metrics';
import { watchParent } from './parent-watch';
import { supervisorClient } from './supervisor-client';

function fatal(message: string): never {
  process.stderr.write(`persona-browser waker: ${message}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let config: WakerConfig;
  try {
    config = loadWakerConfig(process.env, path.resolve(__dirname, '..', '..'));
  } catch (err) {
    if (err instanceof ConfigError) fatal(err.message);
    throw err;
  }
  // The proxy password and the GeoIP token never reach a log line, whatever carries them.
  const logger = createLogger([
    config.serviceKey,
    config.identity.proxyPassword,
    config.identity.geoipToken,
  ]);
  const driver = await createDriver(config, logger).catch((err: unknown) =>
    fatal((err as Error).message),
  );
  const commit = await readCommit(config.repoRoot);
  const fleet = new Fleet({
    personasDir: config.personasDir,
    wakerPort: config.port,
    driver,
    logger,
    workerEnv: config.workerEnv,
    commit,
    pauseSeconds: config.pauseSeconds,
    identity: config.identity,
    updateTrigger: path.join(config.repoRoot, '.update-trigger'),
  });

  const metrics = new MetricsSampler({
    intervalS: config.metricsIntervalS,
    windowS: config.metricsWindowS,
    instances: () => fleet.instances(),
    onError: (err) => logger.warn('metrics sample failed', { err: String(err) }),
  });

  const app = createApp({
    fleet,
    metrics,
    requestsPerHour,
    supervisor: config.supervisorUrl
      ? supervisorClient(config.supervisorUrl, config.serviceKey)
      : null,
    serviceKey: config.serviceKey,
    logger,
    ...defaultStaticDirs(),
  });
  metrics.start();
  const server = app.listen(config.port);
  await new Promise<void>((resolve) => {
    server.once('listening', resolve);
    server.once('error', (err) => fatal(`cannot listen on port ${config.port}: ${err.message}`));
  });
  logger.info('listening', {
    port: (server.address() as AddressInfo).port,
    driver: driver.kind,
    fleet: config.fleetId,
    personas_dir: config.personasDir,
  });
  if (!config.serviceKey)
    logger.warn('SERVICE_KEY is not set: every authenticated call answers 500');

  let stopping = false;
  const shutdown = async (reason: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { reason });
    metrics.stop();
    server.close();
    server.closeAllConnections();
    await fleet.stop();
    logger.info('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => void shutdown(signal));
  }
  // Started by a supervisor: when it dies (even by SIGKILL) the fleet must not outlive it.
  const { supervisorPid } = config;
  if (supervisorPid !== null) {
    // Our output is a pipe the supervisor reads: once it is gone, writes fail (EPIPE), and the
    // shutdown that stops the workers must go on regardless.
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    watchParent(supervisorPid, (ppid) => {
      logger.warn('supervisor gone: shutting down', { supervisor_pid: supervisorPid, ppid });
      void shutdown('supervisor gone');
    });
  }
  process.on('unhandledRejection', (err) => logger.error('unhandled rejection', { err }));

  await fleet.start();
  logger.info('fleet started', { personas: fleet.list().map((p) => `${p.name}:${p.state}`) });
}

void main();
