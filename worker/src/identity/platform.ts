/**
 * A persona may tell another operating system than the machine's (`BROWSER_PLATFORM`). Every
 * surface then says the same: the User-Agent string and header, `navigator.platform` in pages
 * and dedicated workers, and the client hints with the real browser's brands and full version
 * list. This file plans what to tell; `platform-browser.ts` makes the browser tell it.
 */

export const PLATFORM_NAMES = ['windows', 'macos', 'linux'] as const;
export type PlatformName = (typeof PLATFORM_NAMES)[number];

/** How a desktop Chrome of each system describes itself. */
interface PlatformFacts {
  /** The system part of the (reduced) User-Agent string, between the first parentheses. */
  uaToken: string;
  /** `navigator.platform`. */
  navigator: string;
  /** Client hints: `Sec-CH-UA-Platform` and `userAgentData.platform`. */
  hint: string;
  platformVersion: string;
  architecture: string;
  bitness: string;
}

const FACTS: Record<PlatformName, PlatformFacts> = {
  // Windows 11 24H2, 64-bit: its UA token stays "Windows NT 10.0"; only the hint tells 11.
  windows: {
    uaToken: 'Windows NT 10.0; Win64; x64',
    navigator: 'Win32',
    hint: 'Windows',
    platformVersion: '19.0.0',
    architecture: 'x86',
    bitness: '64',
  },
  // A Mac on Apple silicon: the UA token and navigator.platform still say Intel, by design.
  macos: {
    uaToken: 'Macintosh; Intel Mac OS X 10_15_7',
    navigator: 'MacIntel',
    hint: 'macOS',
    platformVersion: '15.1.0',
    architecture: 'arm',
    bitness: '64',
  },
  linux: {
    uaToken: 'X11; Linux x86_64',
    navigator: 'Linux x86_64',
    hint: 'Linux',
    platformVersion: '6.1.0',
    architecture: 'x86',
    bitness: '64',
  },
};

export interface Brand {
  brand: string;
  version: string;
}

/** What the real browser tells, read once from a page of its own. */
export interface RealAgent {
  userAgent: string;
  brands: Brand[];
  fullVersionList: Brand[];
  /** `Browser.getVersion`'s product version (`156.0.8078.79`). */
  fullVersion: string;
  mobile: boolean;
  model: string;
  formFactors: string[];
}

/** CDP's `Emulation.UserAgentMetadata`. */
export interface UserAgentMetadata {
  brands: Brand[];
  fullVersionList: Brand[];
  fullVersion: string;
  platform: string;
  platformVersion: string;
  architecture: string;
  model: string;
  mobile: boolean;
  bitness: string;
  wow64: boolean;
  formFactors: string[];
}

/** What every page and its workers are told instead of the machine's system. */
export interface PlatformOverride {
  name: PlatformName;
  userAgent: string;
  /** `navigator.platform`, in pages and dedicated workers. */
  platform: string;
  userAgentMetadata: UserAgentMetadata;
}

/** The system a User-Agent string names, or null for one this product does not tell. */
export function platformOfUserAgent(userAgent: string): PlatformName | null {
  if (/Windows NT/.test(userAgent)) return 'windows';
  if (/Macintosh/.test(userAgent)) return 'macos';
  if (/X11; Linux|Linux x86_64/.test(userAgent)) return 'linux';
  return null;
}

/**
 * The override that makes `real` tell `name`, or null when it already does (a persona that
 * asks for its machine's own system is left untouched). The browser, its version and its
 * brands stay the real ones: only the system changes.
 */
export function planPlatform(real: RealAgent, name: PlatformName): PlatformOverride | null {
  if (platformOfUserAgent(real.userAgent) === name) return null;
  const facts = FACTS[name];
  if (!/\([^)]*\)/.test(real.userAgent)) {
    throw new Error(`the browser's user agent has no system part: ${real.userAgent}`);
  }
  return {
    name,
    userAgent: real.userAgent.replace(/\([^)]*\)/, `(${facts.uaToken})`),
    platform: facts.navigator,
    userAgentMetadata: {
      brands: real.brands,
      fullVersionList: real.fullVersionList,
      fullVersion: real.fullVersion,
      platform: facts.hint,
      platformVersion: facts.platformVersion,
      architecture: facts.architecture,
      model: real.model,
      mobile: real.mobile,
      bitness: facts.bitness,
      wow64: false,
      formFactors: real.formFactors,
    },
  };
}

/**
 * The script run in each worker before its own code (the worker is held at its start for it).
 * No DevTools command reaches a worker's `navigator.platform` (measured, Chromium 156:
 * `Emulation.` and `Network.setUserAgentOverride` on the worker's own session change its
 * client hints and request headers, never its platform), nor a shared or service worker's
 * `navigator.userAgent`; so those getters are wrapped (`userAgent` only when given, with
 * `appVersion`, which is the same string without its `Mozilla/`). Each wrapper calls the
 * native getter first, so a call on a foreign receiver still throws the browser's own
 * TypeError, and keeps its name and length; its source text reads
 * `function () { [native code] }` where the native one names itself, which a detector that
 * compares getter sources can see.
 */
export function workerPlatformScript(platform: string, userAgent: string | null = null): string {
  const values: Record<string, string> = { platform };
  if (userAgent) {
    values.userAgent = userAgent;
    values.appVersion = userAgent.replace(/^Mozilla\//, '');
  }
  return `(() => {
  const proto = Object.getPrototypeOf(navigator);
  for (const [name, value] of Object.entries(${JSON.stringify(values)})) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (!d || typeof d.get !== 'function') continue;
    const get = new Proxy(d.get, { apply: (target, self, args) => (Reflect.apply(target, self, args), value) });
    Object.defineProperty(proto, name, { ...d, get });
  }
})()`;
}
