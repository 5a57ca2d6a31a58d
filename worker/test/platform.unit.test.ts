import vm from 'node:vm';
import type { RealAgent } from '../src/identity/platform';
import {
  googleChromeBrands,
  planPlatform,
  platformOfUserAgent,
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

  test('navigator.platform tells the planned value; the property keeps its shape', () => {
    const context = realm();
    vm.runInContext(workerPlatformScript('Win32'), context);
    expect(
      vm.runInContext(
        `const d = Object.getOwnPropertyDescriptor(WorkerNavigator.prototype, 'platform');
         ({ value: navigator.platform, own: Object.hasOwn(navigator, 'platform'),
            enumerable: d.enumerable, configurable: d.configurable, name: d.get.name,
            length: d.get.length })`,
        context,
      ),
    ).toEqual({
      value: 'Win32',
      own: false,
      enumerable: true,
      configurable: true,
      name: 'get platform',
      length: 0,
    });
  });

  test('without a user agent only the platform changes; with one, userAgent and appVersion too', () => {
    const read = `[navigator.platform, navigator.userAgent, navigator.appVersion]`;
    const plain = realm();
    vm.runInContext(workerPlatformScript('Win32'), plain);
    expect(vm.runInContext(read, plain)).toEqual([
      'Win32',
      'Mozilla/5.0 (X11; Linux x86_64)',
      '5.0 (X11; Linux x86_64)',
    ]);
    const full = realm();
    vm.runInContext(workerPlatformScript('Win32', 'Mozilla/5.0 (Windows NT 10.0)'), full);
    expect(vm.runInContext(read, full)).toEqual([
      'Win32',
      'Mozilla/5.0 (Windows NT 10.0)',
      '5.0 (Windows NT 10.0)',
    ]);
  });

  test('a call on a foreign receiver still throws the getter’s own error', () => {
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
