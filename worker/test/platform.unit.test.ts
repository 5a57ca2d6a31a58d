import vm from 'node:vm';
import type { RealAgent } from '../src/identity/platform';
import {
  fullVersionListOf,
  googleChromeBrands,
  machinePlatform,
  planPlatform,
  platformOfUserAgent,
  userAgentSwitch,
  workerPlatformScript,
} from '../src/identity/platform';

const LINUX_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';
const real: RealAgent = {
  userAgent: LINUX_UA,
  system: {
    navigator: 'Linux x86_64',
    hint: 'Linux',
    platformVersion: '',
    architecture: 'x86',
    bitness: '64',
    wow64: false,
  },
  brands: [
    { brand: 'Not:A-Brand', version: '8' },
    { brand: 'Chromium', version: '156' },
  ],
  fullVersionList: [
    { brand: 'Not:A-Brand', version: '8.0.0.0' },
    { brand: 'Chromium', version: '156.0.8078.79' },
  ],
  fullVersion: '156.0.8078.79',
  mobile: false,
  model: '',
  formFactors: ['Desktop'],
};

describe('the system a user agent names', () => {
  test.each([
    [LINUX_UA, 'linux'],
    [LINUX_UA.replace('X11; Linux x86_64', 'Windows NT 10.0; Win64; x64'), 'windows'],
    [LINUX_UA.replace('X11; Linux x86_64', 'Macintosh; Intel Mac OS X 10_15_7'), 'macos'],
    ['Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36', null],
  ])('%s → %s', (ua, name) => {
    expect(platformOfUserAgent(ua)).toBe(name);
  });
});

describe('planning a platform', () => {
  test('the machine’s own system: nothing to change', () => {
    expect(planPlatform(real, 'linux')).toBeNull();
  });

  test('Windows: only the system part changes; browser, version and brands stay real', () => {
    const plan = planPlatform(real, 'windows');
    expect(plan).toEqual({
      name: 'windows',
      brand: null,
      userAgent:
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
      platform: 'Win32',
      userAgentMetadata: {
        brands: real.brands,
        fullVersionList: real.fullVersionList,
        fullVersion: '156.0.8078.79',
        platform: 'Windows',
        platformVersion: '19.0.0',
        architecture: 'x86',
        model: '',
        mobile: false,
        bitness: '64',
        wow64: false,
        formFactors: ['Desktop'],
      },
    });
  });

  test('macOS: the Intel token and MacIntel, as every Mac’s Chrome says', () => {
    const plan = planPlatform(real, 'macos');
    expect(plan?.userAgent).toContain('(Macintosh; Intel Mac OS X 10_15_7)');
    expect(plan?.platform).toBe('MacIntel');
    expect(plan?.userAgentMetadata.platform).toBe('macOS');
  });

  test('a user agent without a system part is refused, not guessed', () => {
    expect(() => planPlatform({ ...real, userAgent: 'Chrome/156' }, 'windows')).toThrow(
      /no system part/,
    );
  });
});

describe('claiming the Google Chrome brand', () => {
  const chromium = (major: number, grease = { brand: 'Not:A-Brand', version: '8' }) => {
    const own = { brand: 'Chromium', version: String(major) };
    // A Chromium puts its GREASE brand at major % 2.
    return major % 2 === 0 ? [grease, own] : [own, grease];
  };
  const names = (major: number): string[] =>
    (googleChromeBrands(chromium(major)) ?? []).map((b) => b.brand);

  test.each([
    // As those Google Chrome releases sent Sec-CH-UA.
    [120, ['Not:A-Brand', 'Chromium', 'Google Chrome']],
    [124, ['Chromium', 'Google Chrome', 'Not:A-Brand']],
    [131, ['Google Chrome', 'Chromium', 'Not:A-Brand']],
    [156, ['Not:A-Brand', 'Chromium', 'Google Chrome']],
  ])('Chrome %i orders its brands by its major version', (major, order) => {
    expect(names(major)).toEqual(order);
  });

  test('Google Chrome carries the Chromium entry’s version; GREASE keeps its own', () => {
    expect(googleChromeBrands(real.fullVersionList)).toEqual([
      { brand: 'Not:A-Brand', version: '8.0.0.0' },
      { brand: 'Chromium', version: '156.0.8078.79' },
      { brand: 'Google Chrome', version: '156.0.8078.79' },
    ]);
  });

  test('a list that is not a Chromium’s two entries is not rewritten', () => {
    expect(googleChromeBrands([{ brand: 'Chromium', version: '156' }])).toBeNull();
    expect(googleChromeBrands([{ brand: 'Edge', version: '1' }, real.brands[0]!])).toBeNull();
  });

  test('on the machine’s own system: the brands alone change, the system is the browser’s own', () => {
    const plan = planPlatform(real, null, 'google-chrome');
    expect(plan).toEqual({
      name: 'linux',
      brand: 'Google Chrome',
      userAgent: LINUX_UA,
      platform: 'Linux x86_64',
      userAgentMetadata: {
        brands: googleChromeBrands(real.brands),
        fullVersionList: googleChromeBrands(real.fullVersionList),
        fullVersion: '156.0.8078.79',
        platform: 'Linux',
        platformVersion: '',
        architecture: 'x86',
        model: '',
        mobile: false,
        bitness: '64',
        wow64: false,
        formFactors: ['Desktop'],
      },
    });
    expect(planPlatform(real, 'linux', 'google-chrome')).toEqual(plan);
  });

  test('with another system: both change together', () => {
    const plan = planPlatform(real, 'windows', 'google-chrome');
    expect(plan?.userAgentMetadata.platform).toBe('Windows');
    expect(plan?.userAgentMetadata.brands.map((b) => b.brand)).toContain('Google Chrome');
  });

  test('telling the truth changes nothing; a Google Chrome keeps its own brands', () => {
    expect(planPlatform(real, null, 'real')).toBeNull();
    const chrome: RealAgent = {
      ...real,
      brands: googleChromeBrands(real.brands) ?? [],
      fullVersionList: googleChromeBrands(real.fullVersionList) ?? [],
    };
    expect(planPlatform(chrome, null, 'google-chrome')).toBeNull();
    expect(planPlatform(chrome, 'windows', 'google-chrome')?.userAgentMetadata.brands).toBe(
      chrome.brands,
    );
  });

  test('a browser whose brands are not a Chromium’s cannot claim, and says why', () => {
    expect(() =>
      planPlatform({ ...real, brands: [{ brand: 'Edge', version: '1' }] }, null, 'google-chrome'),
    ).toThrow(/not a Chromium's/);
  });
});

describe('the browser’s --user-agent switch', () => {
  test('the reduced user agent of the asked system, for the browser’s major version', () => {
    expect(
      userAgentSwitch(
        'Chromium 156.0.8078.108 built on Debian GNU/Linux 12 (bookworm)',
        'windows',
        'linux',
      ),
    ).toBe(planPlatform(real, 'windows')?.userAgent);
    expect(userAgentSwitch('Google Chrome 157.0.8100.2 ', 'macos', 'linux')).toBe(
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/157.0.0.0 Safari/537.36',
    );
  });

  test('none for the machine’s own system; a version line without a version is refused', () => {
    expect(userAgentSwitch('Chromium 156.0.8078.108', 'linux', 'linux')).toBeNull();
    expect(() => userAgentSwitch('Chromium (unknown)', 'windows', 'linux')).toThrow(
      /cannot read the browser's version/,
    );
  });

  test('the machine is named from the operating system', () => {
    expect(
      ['linux', 'win32', 'darwin', 'aix'].map((os) => machinePlatform(os as NodeJS.Platform)),
    ).toEqual(['linux', 'windows', 'macos', null]);
  });

  test('a switched browser already names the system: planned against the machine it still plans', () => {
    const switched = { ...real, userAgent: planPlatform(real, 'windows')?.userAgent ?? '' };
    expect(planPlatform(switched, 'windows')).toBeNull();
    expect(planPlatform(switched, 'windows', 'real', 'linux')).toEqual(
      planPlatform(real, 'windows'),
    );
  });

  test('its emptied full version list is told as the browser tells it unswitched', () => {
    expect(fullVersionListOf(real.brands, real.fullVersion)).toEqual(real.fullVersionList);
    const plan = planPlatform({ ...real, fullVersionList: [] }, 'windows');
    expect(plan?.userAgentMetadata.fullVersionList).toEqual(real.fullVersionList);
  });
});

describe('the worker script', () => {
  /** A realm whose navigator has a platform getter that checks its receiver, as Blink's does. */
  const realm = (): vm.Context => {
    const context = vm.createContext({});
    vm.runInContext(
      `class WorkerNavigator {}
       const real = new WorkerNavigator();
       const getters = {
         get platform() { return check(this, 'Linux x86_64'); },
         get userAgent() { return check(this, 'Mozilla/5.0 (X11; Linux x86_64)'); },
         get appVersion() { return check(this, '5.0 (X11; Linux x86_64)'); },
       };
       function check(self, value) {
         if (self !== real) throw new TypeError('Illegal invocation');
         return value;
       }
       for (const name of Object.keys(getters)) {
         Object.defineProperty(WorkerNavigator.prototype, name, {
           configurable: true, enumerable: true,
           get: Object.getOwnPropertyDescriptor(getters, name).get,
         });
       }
       globalThis.navigator = real;`,
      context,
    );
    return context;
  };

  test('navigator.platform tells the planned value; the prototype’s getter stays the native one', () => {
    const context = realm();
    vm.runInContext(
      `globalThis.before = Object.getOwnPropertyDescriptor(WorkerNavigator.prototype, 'platform').get`,
      context,
    );
    vm.runInContext(workerPlatformScript('Win32'), context);
    expect(
      vm.runInContext(
        `const d = Object.getOwnPropertyDescriptor(WorkerNavigator.prototype, 'platform');
         ({ value: navigator.platform, same: d.get === before, own: Object.getOwnPropertyNames(navigator),
            fromPrototype: d.get.call(navigator) })`,
        context,
      ),
    ).toEqual({ value: 'Win32', same: true, own: ['platform'], fromPrototype: 'Linux x86_64' });
  });

  test('only the platform changes: the user agent and app version stay the browser’s', () => {
    const context = realm();
    vm.runInContext(workerPlatformScript('Win32'), context);
    expect(
      vm.runInContext(`[navigator.platform, navigator.userAgent, navigator.appVersion]`, context),
    ).toEqual(['Win32', 'Mozilla/5.0 (X11; Linux x86_64)', '5.0 (X11; Linux x86_64)']);
  });

  test('the getter, untouched, still throws its own error on a foreign receiver', () => {
    const context = realm();
    vm.runInContext(workerPlatformScript('Win32'), context);
    expect(() =>
      vm.runInContext(
        `Object.getOwnPropertyDescriptor(WorkerNavigator.prototype, 'platform').get.call({})`,
        context,
      ),
    ).toThrow('Illegal invocation');
  });
});
