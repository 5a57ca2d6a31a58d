import type { AddressInfo } from 'node:net';
import type { CommitInfo, ProxyIdentity } from '@persona-browser/contracts';
import { readCommit } from '@persona-browser/contracts';
import { startVnc, startXvfb } from '@persona-browser/xvfb';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { createServer } from './app';
import { findBrowserBinary } from './browser/launch';
import { Navigator } from './browser/navigator';
import { claimProfile, releaseProfile } from './browser/profile-lock';
import { loadConfig } from './config';
import type { Config } from './config';
import { RequestTracker } from './http/request-tracker';
import { CaptureRegistry } from './capture/registry';
import { MediaStore } from './media/store';
import { VisionClient } from './vision/client';
import { LiveView } from './live';
import { liveVncTarget } from './live/vnc-server';
import { Lifecycle, SecretValues, createLogger, fatal } from '@persona-browser/service-kit';
import { errorMessage } from './errors';
import { sleep } from './util';
import { RequestLog } from './log/request-log';
import { DEFAULT_PLUGINS_DIR, defaultRepoRoot, workerVersion } from './paths';
import { pluginRandom } from './plugins/random';
import { discoverPlugins } from './plugins/discover';
import { familySecrets, registerBlacklists } from './plugins/families';
import { ProxyErrors } from './system-info';
import { identityLaunch, presenceLaunch } from './identity/apply';
import { applyIdentityToPage, applyLocaleToPage } from './identity/page';
import { readIdentity } from './identity/read';
import type { ProxyRelay } from './identity/relay';
import { startRelay } from './identity/relay';

const DRAIN_MS = 5_000;
const PROGRAM = 'persona-browser';

async function main(): Promise<void> {
  let config: Config;
  let executablePath: string;
  let identity: ProxyIdentity | null;
  try {
    config = loadConfig(process.env, defaultRepoRoot(), DEFAULT_PLUGINS_DIR);
    executablePath = findBrowserBinary(config.chromePath);
    // A broken identity file stops the worker here: never a browser without its proxy.
    identity = readIdentity(config.personaDir);
  } catch (err) {
    fatal(PROGRAM, err instanceof Error ? err.message : String(err));
  }
  // Proxy credentials belong to the waker; the browser and its children never see them.
  delete process.env.PROXY_USERNAME;
  delete process.env.PROXY_PASSWORD;

  // Plugins are found before anything logs, so that their families' secrets are redacted too.
  const plugins = discoverPlugins(config.pluginsDir);
  const secrets = new SecretValues([
    config.serviceKey,
    config.visionKeyGratis,
    config.visionKeyPaga,
    ...familySecrets(plugins, config.env),
    identity?.proxy.password ?? null,
  ]);
  const logger = createLogger({ secrets });
  for (const b of plugins.broken)
    logger.error('plugin skipped', { plugin: b.name, error: b.error });
  logger.info('plugins loaded', {
    dir: plugins.root,
    count: plugins.plugins.length,
    plugins: plugins.plugins.map((p) => p.name),
  });
  const { repoRoot } = config;
  const life = new Lifecycle(PROGRAM, logger);

  // The persona is this worker's before anything else starts: one held by another live worker
  // is refused here, and a browser left by a dead one is cleared.
  await life.step(
    'profile',
    () => claimProfile(config.profileDir),
    () => releaseProfile(config.profileDir),
  );

  // Every browser request goes through the relay, which adds the session's credentials.
  const relay: ProxyRelay | null = identity
    ? await life.step(
        'proxy relay',
        () =>
          startRelay({ ...identity.proxy, upstream: identity.proxy.server, logger }).catch(
            (err: unknown) => {
              throw new Error(`cannot start the proxy relay: ${errorMessage(err)}`);
            },
          ),
        (r) => r.close(),
      )
    : null;
  if (identity && relay) {
    logger.info('proxy identity applied', {
      upstream: new URL(identity.proxy.server).host,
      session: identity.session,
      exit_ip: identity.exit_ip,
      country: identity.country,
      timezone: identity.timezone,
      locale: identity.locale,
      relay_port: relay.port,
    });
  }

  const xvfb: VirtualDisplay | null = config.display
    ? null
    : await life.step('display', startXvfb, (x) => x.stop());
  const display = xvfb?.display ?? (config.display as string);
  if (xvfb) logger.info('virtual display started', { display, pid: xvfb.pid });
  const vncPort = config.vncPort;
  if (vncPort) {
    const vnc = await life.step(
      'vnc',
      () => startVnc(display, vncPort),
      (v) => v.stop(),
    );
    logger.info('vnc listening on localhost', { port: vncPort, display, pid: vnc.pid });
  }
  // The live view (/vnc/) always has a VNC server on the worker's own display.
  const liveVnc = await life.step(
    'live view vnc',
    () => liveVncTarget({ vncPort, ownDisplay: xvfb !== null, display, logger }),
    (l) => l.started?.stop(),
  );

  // An identity sets where the person is; without one, BROWSER_TIMEZONE and BROWSER_LOCALE may.
  const launchIdentity =
    identity && relay
      ? identityLaunch(identity, relay.port)
      : presenceLaunch({ timezone: config.browserTimezone, locale: config.browserLocale });
  const pageLocale = identity ? null : config.browserLocale;
  const proxyErrors = new ProxyErrors(config.personaDir, () => relay?.failures ?? 0);
  const media = new MediaStore({ ttlMs: config.mediaTtlMs, capBytes: config.mediaCapBytes });
  life.onStop('media store', () => media.close());
  const captures = new CaptureRegistry({ secrets });
  for (const problem of registerBlacklists(plugins, config.env, captures.blacklist))
    logger.error('plugin family blacklist not applied', problem);
  const vision = new VisionClient({
    ...config.vision,
    keyGratis: config.visionKeyGratis,
    keyPaga: config.visionKeyPaga,
  });
  const navigator = new Navigator({
    redact: (text) => secrets.redact(text),
    executablePath,
    profileDir: config.profileDir,
    display,
    devtoolsPort: config.devtoolsPort,
    noSandbox: config.chromeNoSandbox,
    extraArgs: launchIdentity.args,
    extraEnv: launchIdentity.env,
    platform: config.browserPlatform,
    slowmoMs: config.slowmoMs,
    timing: config.timing,
    logger,
    hooks: {
      onPageCreated: async (p) => {
        captures.attach(p);
        if (identity) await applyIdentityToPage(p, identity);
        else if (pageLocale) await applyLocaleToPage(p, pageLocale);
        // The page is handed out only once its capture listens.
        return captures.ready(p.id);
      },
      onPageClosed: (pageId) => captures.detach(pageId),
    },
  });
  life.onStop('browser', () => navigator.stop());
  const tracker = new RequestTracker(new RequestLog(config.dataDir));
  const live = new LiveView({
    vnc: liveVnc.target,
    navigator,
    serviceKey: config.serviceKey,
    logger,
    ...config.liveControl,
  });
  let commit: Promise<CommitInfo | null> | null = null;

  const server = createServer({
    navigator,
    tracker,
    proxyErrors,
    commit: () => (commit ??= readCommit(repoRoot)),
    persona: config.personaName,
    repoRoot,
    wakerUrl: config.wakerUrl,
    serviceKey: config.serviceKey,
    logger,
    version: workerVersion(),
    validateResponses: config.validateResponses,
    allowFileUrls: config.allowFileUrls,
    media,
    captures,
    vision,
    live,
    plugins: {
      found: plugins,
      env: config.env,
      rngFor: pluginRandom(config.pluginSeed),
      secrets,
    },
    shutdown: () => void life.exit('kill endpoint'),
  });
  await life.listen(server, config.port, config.host, async () => {
    // Calls under way get a moment to finish; the live view's sockets close with the rest.
    const deadline = Date.now() + DRAIN_MS;
    while (tracker.activity().in_flight > 0 && Date.now() < deadline) await sleep(50);
    tracker.abandonAll();
    live.close();
  });
  const port = (server.address() as AddressInfo).port;
  logger.info('listening', { host: config.host, port, persona: config.personaDir });
  life.exitOnSignals(['SIGTERM', 'SIGINT', 'SIGHUP']);
  process.on('unhandledRejection', (err) => logger.error('unhandled rejection', { err }));
  process.on('uncaughtException', (err) => logger.error('uncaught exception', { err }));
  if (!config.serviceKey)
    logger.warn('SERVICE_KEY is not set: every authenticated call answers 500');

  navigator.start().catch((err: unknown) => logger.error('browser failed to start', { err }));
}

void main();
