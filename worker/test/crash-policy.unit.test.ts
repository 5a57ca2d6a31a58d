import { ProtocolError } from 'puppeteer-core';
import { pageScoped } from '../src/startup/crash-policy';

/** Which rejections nothing handled end the worker: all but one page's going away. */
test("a page's target or session gone, or its detached frame, is the page's; anything else is not", () => {
  const gone = [
    new ProtocolError('Protocol error (Page.addScriptToEvaluateOnNewDocument): Target closed'),
    new ProtocolError(
      'Protocol error (Runtime.evaluate): Session closed. Most likely the page has been closed.',
    ),
    new Error("Attempted to use detached Frame 'D28F07F84BBB336EF6862EBEB6753471'."),
  ];
  expect(gone.map(pageScoped)).toEqual([true, true, true]);
  // The controls: the worker's own faults, and a protocol error that is not a page gone away.
  const own = [
    new Error('test crash: PB_TEST_CRASH_FILE'),
    new TypeError("Cannot read properties of undefined (reading 'x')"),
    new ProtocolError('Protocol error (Page.navigate): Invalid parameters'),
    'Target closed',
    undefined,
  ];
  expect(own.map(pageScoped)).toEqual([false, false, false, false, false]);
});
