import { Lifecycle } from '@persona-browser/service-kit';
import type { Logger } from '@persona-browser/service-kit';
import { crashOnFile } from './startup/crash-file';
import { pageScoped } from './startup/crash-policy';
import { PROGRAM, readSettings } from './startup/settings';
import { workerStartup } from './startup/worker-startup';

/** How long the orderly stop after a crash may take before the worker exits regardless. */
const CRASH_STOP_MS = 30_000;

/**
 * An exception nothing caught, or a rejection nothing handled that is not one page's
 * (`pageScoped`: that one is logged as a warning), leaves the worker in a state no one knows:
 * it is logged, every step stops in reverse (the browser and the display with them) and the
 * worker exits 1, for whoever runs it to start it afresh. A stop that hangs does not
 * keep it alive: CRASH_STOP_MS later it exits 1 all the same. A further crash while it stops
 * is logged only.
 */
function exitOnCrash(life: Lifecycle, logger: Logger): void {
  let crashed = false;
  const crash = (err: unknown, reason: string): void => {
    logger.error('uncaught exception', { err, reason });
    if (crashed) return;
    crashed = true;
    // Should the event loop run dry while a stop hangs, the worker still ends with 1.
    process.exitCode = 1;
    setTimeout(() => process.exit(1), CRASH_STOP_MS).unref();
    void life.exit(reason, 1);
  };
  process.on('uncaughtException', (err) => crash(err, 'uncaught exception'));
  process.on('unhandledRejection', (err) => {
    if (pageScoped(err)) logger.warn('a page went away under a call nothing awaited', { err });
    else crash(err, 'unhandled rejection');
  });
}

/**
 * Starts the worker's steps in order (see `workerStartup`). From before the first one, a signal
 * stops them in reverse (and one still starting once it has) and exits 0; a crash does the same
 * and exits 1.
 */
async function main(): Promise<void> {
  const settings = readSettings(process.env);
  const { logger, config } = settings;
  const life = new Lifecycle(PROGRAM, logger);
  life.exitOnSignals(['SIGTERM', 'SIGINT', 'SIGHUP']);
  exitOnCrash(life, logger);
  crashOnFile(process.env.PB_TEST_CRASH_FILE);
  await workerStartup({ ...settings, exit: (reason) => void life.exit(reason) }).run(life);
  if (!config.serviceKey)
    logger.warn('SERVICE_KEY is not set: every authenticated call answers 500');
}

void main();
