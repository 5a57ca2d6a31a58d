import { CaptureRegistry } from '../capture/registry';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { renderNodeProblem } from '../browser/gpu';
import { Navigator } from '../browser/navigator';
import { identityLaunch, presenceLaunch } from '../identity/apply';
import { hostTimeZone, presenceWarnings } from '../identity/presence-check';
import { applyIdentityToPage, applyLocaleToPage, pageOverrides } from '../identity/page';
import type { ProxyRelay } from '../identity/relay';
import { MediaStore } from '../media/store';
import { registerBlacklists } from '../plugins/families';
import type { StartupStep } from './plan';
import type { WorkerSettings } from './settings';

/** Downloads handed out as one-use links; closing it frees what they hold. */
export const mediaStep: StartupStep<Pick<WorkerSettings, 'config'>, { media: MediaStore }> = {
  name: 'media store',
  start: ({ config }) => ({
    media: new MediaStore({ ttlMs: config.mediaTtlMs, capBytes: config.mediaCapBytes }),
  }),
  stop: ({ media }) => media.close(),
};

/** What each page captures (network, console), with the plugin families' blacklists. */
export const capturesStep: StartupStep<
  Pick<WorkerSettings, 'config' | 'logger' | 'plugins' | 'secrets'>,
  { captures: CaptureRegistry }
> = {
  name: 'captures',
  start({ config, logger, plugins, secrets }) {
    const captures = new CaptureRegistry({ secrets });
    for (const problem of registerBlacklists(plugins, config.env, captures.blacklist))
      logger.error('plugin family blacklist not applied', problem);
    return { captures };
  },
};

/**
 * The browser and its pool of pages, set up but not launched yet (`launchStep` does that last,
 * so the worker answers while the browser comes up). Stopping it closes the browser.
 */
export const browserStep: StartupStep<
  Pick<WorkerSettings, 'config' | 'logger' | 'secrets' | 'identity' | 'executablePath'> & {
    relay: ProxyRelay | null;
    display: string;
    xvfb: VirtualDisplay | null;
    captures: CaptureRegistry;
  },
  { navigator: Navigator }
> = {
  name: 'browser',
  start({ config, logger, secrets, identity, executablePath, relay, display, xvfb, captures }) {
    // An identity sets where the person is; without one, BROWSER_TIMEZONE and BROWSER_LOCALE may.
    const launch =
      identity && relay
        ? identityLaunch(identity, relay.port)
        : presenceLaunch({ timezone: config.browserTimezone, locale: config.browserLocale });
    const pageLocale = identity ? null : config.browserLocale;
    // GPU=dri without a render node this process can open draws in software, and says so.
    const gpuProblem = config.gpu === 'dri' ? renderNodeProblem() : null;
    const warnings = [
      ...presenceWarnings({
        hasIdentity: identity !== null,
        browserTimezone: config.browserTimezone,
        hostZone: hostTimeZone(),
      }),
      ...(gpuProblem ? [`${gpuProblem}: WebGL stays on SwiftShader`] : []),
    ];
    for (const warning of warnings) logger.warn(warning);
    const navigator = new Navigator({
      redact: (text) => secrets.redact(text),
      executablePath,
      profileDir: config.profileDir,
      display,
      // The display's work area, filled as a maximised window; an outside DISPLAY's is not known.
      window: xvfb?.workArea,
      gpu: gpuProblem ? null : config.gpu,
      devtoolsPort: config.devtoolsPort,
      noSandbox: config.chromeNoSandbox,
      extraArgs: launch.args,
      extraEnv: launch.env,
      platform: config.browserPlatform,
      brand: config.browserBrand,
      slowmoMs: config.slowmoMs,
      warnings,
      timing: config.timing,
      logger,
      guestPageSetup: pageOverrides(identity, pageLocale),
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
    return { navigator };
  },
  stop: ({ navigator }) => navigator.stop(),
};

/**
 * Launches the browser without waiting for it: the worker already answers, and its status says
 * how the browser is doing. A browser that fails to launch is logged, not fatal.
 */
export const launchStep: StartupStep<
  Pick<WorkerSettings, 'logger'> & { navigator: Navigator },
  object
> = {
  name: 'browser launch',
  start({ logger, navigator }) {
    navigator.start().catch((err: unknown) => logger.error('browser failed to start', { err }));
    return {};
  },
};
