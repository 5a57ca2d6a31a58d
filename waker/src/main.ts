import http from 'node:http';
import path from 'node:path';
import type { MetricsSample } from '@persona-browser/contracts';
import { readCommit } from '@persona-browser/contracts';
import {
  AuthGuard,
  Lifecycle,
  boundPort,
  createLogger,
  fatal,
  updateTriggerPath,
} from '@persona-browser/service-kit';
import { createApp, defaultStaticDirs } from './api/app';
import { FleetMcp } from './api/mcp';
import { loadWakerConfig } from './config';
import type { WakerConfig } from './config';
import { createDriver } from './drivers';
import { Fleet } from './fleet';
import { RevocationPush } from './tokens/push';
import { TokenStore } from './tokens/store';
import type { BudgetPersona } from './memory/budget';
import { MemoryBudget } from './memory/budget';
import type { BudgetRow, PersonaRow } from './metrics';
import { FleetMetrics, MetricsSampler, personaRequests } from './metrics';
import { watchParent } from './parent-watch';
import { movePersona } from './placement/move';
import { supervisorClient } from './supervisor-client';
import { registerSiteCheckMetrics } from './site-checks/metrics';
import { SiteChecks } from './site-checks/schedule';

const PROGRAM = 'persona-browser waker';

async function main(): Promise<void> {
  let config: WakerConfig;
  try {
    config = loadWakerConfig(process.env, path.resolve(__dirname, '..', '..'));
  } catch (err) {
    fatal(PROGRAM, err instanceof Error ? err.message : String(err));
  }
  // The proxy password and the GeoIP token never reach a log line, whatever carries them.
  const logger = createLogger({
    secrets: [config.serviceKey, config.identity.proxyPassword, config.identity.geoipToken],
  });
  const life = new Lifecycle(PROGRAM, logger);
  // From the first step on, a signal stops what has started, in reverse order.
  life.exitOnSignals(['SIGTERM', 'SIGINT']);
  process.on('unhandledRejection', (err) => logger.error('unhandled rejection', { err }));
  // A step that fails (the engine restarting, a listing refused) is tried again for a while;
  // then what started stops and the waker exits non-zero, for its supervisor to restart it.
  const retry = { retryForMs: config.startRetryS * 1000 };
  const driver = await life.step('driver', () => createDriver(config, logger), undefined, retry);
  const commit = await readCommit(config.repoRoot);
  // Read at scrape time (never before the API listens) from the fleet and the sampler below.
  const budget = new MemoryBudget({
    settings: config.memory,
    personas: (): BudgetPersona[] => fleet.all(),
    logger,
    nodeMemoryMb: (node) => driver.nodes?.().find((n) => n.hostname === node)?.memory_mb ?? null,
  });
  const prometheus = new FleetMetrics({
    personas: (): PersonaRow[] => fleet.rows(),
    latest: (): MetricsSample | null => metrics.latest(),
    budget: (): BudgetRow[] => budget.usage(),
    starts: (): { running: number; waiting: number } => ({
      running: fleet.startGate.running,
      waiting: fleet.startGate.waiting,
    }),
  });
  // Scoped tokens, kept beside the personas; one guard for every door of this waker (its API,
  // its MCP, each persona's port), so failed attempts are counted once per address.
  const tokens = new TokenStore(config.personasDir, config.serviceKey);
  const guard = new AuthGuard({
    serviceKey: config.serviceKey,
    failuresPerMinute: config.authFailuresPerMinute,
    revoked: (id) => tokens.isRevoked(id),
  });
  const push = new RevocationPush(tokens, config.serviceKey, logger);
  tokens.onRevoke((name) => {
    const address = fleet.running(name);
    if (address) void push.send(name, address);
  });
  const fleet = new Fleet({
    counters: prometheus,
    guard,
    refusals: prometheus,
    repoRoot: config.repoRoot,
    workerUp: (name, handle) => push.send(name, handle.address),
    personasDir: config.personasDir,
    wakerPort: config.port,
    driver,
    logger,
    workerEnv: config.workerEnv,
    commit,
    pauseSeconds: config.pauseSeconds,
    lightSleepSeconds: config.lightSleepSeconds,
    identity: config.identity,
    updateTrigger: updateTriggerPath(config.repoRoot),
    budget,
    wakeConcurrency: config.wakeConcurrency,
    wakeQueueS: config.wakeQueueS,
  });
  // Stopped last: every persona container closes its browser cleanly, unless the workers are
  // handed over (SIGUSR2, below) to the next waker, which adopts them.
  let handOver = false;
  life.onStop('fleet', () => (handOver ? fleet.release() : fleet.stop()));

  const metrics = await life.step(
    'metrics',
    () => {
      const sampler = new MetricsSampler({
        intervalS: config.metricsIntervalS,
        windowS: config.metricsWindowS,
        instances: () => fleet.instances(),
        // A running persona whose process tree this host cannot see (a cluster node's) is
        // sampled from its worker, over the network.
        overNetwork: (instance) => instance.pid === null,
        serviceKey: config.serviceKey,
        onError: (err) => logger.warn('metrics sample failed', { err: String(err) }),
        onSample: (sample) => budget.observe(sample),
      });
      sampler.start();
      return sampler;
    },
    (m) => m.stop(),
  );

  // SITE_CHECKS of each persona.env: scheduled once the fleet has started (below).
  const siteChecks = new SiteChecks({
    personas: () => fleet.list().map(({ name }) => fleet.get(name).spec),
    serviceKey: config.serviceKey,
    logger,
  });
  registerSiteCheckMetrics(prometheus.registry, siteChecks);
  life.onStop('site-checks', () => siteChecks.stop());

  const mcp = new FleetMcp({
    fleet,
    serviceKey: config.serviceKey,
    guard,
    refusals: prometheus,
    logger,
    version: '0.1.0',
  });
  const app = createApp({
    fleet,
    mcp,
    metrics,
    prometheus,
    nodes: () => driver.nodes?.() ?? [],
    move: (persona, node) => movePersona(persona, driver, node),
    requestsPerHour: (persona, hours) => personaRequests(persona, hours, config.serviceKey),
    supervisor: config.supervisorUrl
      ? supervisorClient(config.supervisorUrl, config.serviceKey)
      : null,
    serviceKey: config.serviceKey,
    guard,
    refusals: prometheus,
    tokens,
    pages: (persona) => fleet.pages(persona),
    siteChecks,
    logger,
    ...defaultStaticDirs(),
  });
  const server = http.createServer(app);
  await life.listen(server, config.port);
  mcp.listening(boundPort(server));
  logger.info('listening', {
    port: boundPort(server),
    driver: driver.kind,
    fleet: config.fleetId,
    personas_dir: config.personasDir,
  });
  if (!config.serviceKey)
    logger.warn('SERVICE_KEY is not set: every authenticated call answers 500');
  // The supervisor's rolling update: this waker ends, its workers keep running for the next.
  process.once('SIGUSR2', () => {
    handOver = driver.canAdopt;
    void life.exit('SIGUSR2: workers handed over to the next waker');
  });

  // Started by a supervisor: when it dies (even by SIGKILL) the fleet must not outlive it.
  const { supervisorPid } = config;
  if (supervisorPid !== null) {
    // Our output is a pipe the supervisor reads: once it is gone, writes fail (EPIPE), and the
    // shutdown that stops the workers must go on regardless.
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    watchParent(supervisorPid, (ppid) => {
      logger.warn('supervisor gone: shutting down', { supervisor_pid: supervisorPid, ppid });
      void life.exit('supervisor gone');
    });
  }

  await life.step('fleet', () => fleet.open());
  await life.step('take-over', () => fleet.takeOver(), undefined, retry);
  fleet.begin();
  siteChecks.start();
  logger.info('fleet started', { personas: fleet.list().map((p) => `${p.name}:${p.state}`) });
}

void main();
