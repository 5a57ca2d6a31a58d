import { Lifecycle } from '@persona-browser/service-kit';
import { PROGRAM, readSettings } from './startup/settings';
import { workerStartup } from './startup/worker-startup';

/** Starts the worker's steps in order (see `workerStartup`); a signal stops them in reverse. */
async function main(): Promise<void> {
  const settings = readSettings(process.env);
  const { logger, config } = settings;
  const life = new Lifecycle(PROGRAM, logger);
  await workerStartup({ ...settings, exit: (reason) => void life.exit(reason) }).run(life);
  life.exitOnSignals(['SIGTERM', 'SIGINT', 'SIGHUP']);
  process.on('unhandledRejection', (err) => logger.error('unhandled rejection', { err }));
  process.on('uncaughtException', (err) => logger.error('uncaught exception', { err }));
  if (!config.serviceKey)
    logger.warn('SERVICE_KEY is not set: every authenticated call answers 500');
}

void main();
