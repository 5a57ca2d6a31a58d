import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';

/** The bounds' settings: the defaults README's Configuration table gives, and what is refused. */

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bounds-config-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const MB = 1024 * 1024;

test('DEVTOOLS_CLIENT_BUFFER_MB: 32 by default, in MB, positive', () => {
  expect(loadConfig({}, root).devtoolsClientBufferBytes).toBe(32 * MB);
  expect(loadConfig({ DEVTOOLS_CLIENT_BUFFER_MB: '0.5' }, root).devtoolsClientBufferBytes).toBe(
    MB / 2,
  );
  expect(() => loadConfig({ DEVTOOLS_CLIENT_BUFFER_MB: '0' }, root)).toThrow(
    /invalid DEVTOOLS_CLIENT_BUFFER_MB/,
  );
});

test('RECORDING_MEMORY_MB: 128 by default, in MB, positive, whether recording is on or not', () => {
  expect(loadConfig({}, root).recordingMemoryBytes).toBe(128 * MB);
  expect(loadConfig({ RECORDING: 'true', RECORDING_MEMORY_MB: '64' }, root)).toMatchObject({
    recordingMemoryBytes: 64 * MB,
    recording: { calls: true },
  });
  expect(() => loadConfig({ RECORDING_MEMORY_MB: '-1' }, root)).toThrow(
    /invalid RECORDING_MEMORY_MB/,
  );
});
