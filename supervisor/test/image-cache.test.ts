import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_BASE_IMAGE, assertDocker, dockerCli } from '@persona-browser/testkit/image';
import { PersonaImage } from '../src/image';

/**
 * The supervisor's image build finds the layers `docker build` (and `docker compose build`)
 * left for the same checkout: a server whose image compose built pays nothing on the first
 * update that needs an image, instead of redoing every step from the first folder copied. The
 * context has what changes the layer cache's key of a copied folder: nested folders, a file a
 * group may write (a mode this process's umask would change), a left-out file, and a step that
 * gives every real build an image of its own.
 */
const BASE = process.env.PERSONA_BASE_IMAGE ?? DEFAULT_BASE_IMAGE;
const REPO = `persona-browser-cachecheck${process.pid}`;
let dir: string;

beforeAll(async () => {
  await assertDocker();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-cache-'));
  const write = (rel: string, text: string, mode = 0o644): void => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
    fs.chmodSync(path.join(dir, rel), mode);
  };
  write(
    'Dockerfile',
    [
      'ARG BASE=debian:bookworm-slim',
      'FROM ${BASE}',
      'COPY conf/ /conf/',
      'COPY . /src/',
      'RUN cat /proc/sys/kernel/random/uuid > /built',
      '',
    ].join('\n'),
  );
  write('.dockerignore', 'state\n');
  write('conf/a.txt', 'a\n');
  write('conf/deep/b.txt', 'b\n', 0o664);
  write('tool.sh', '#!/bin/sh\n', 0o755);
  write('state/runtime.json', '{}\n');
  fs.mkdirSync(path.join(dir, 'conf', 'empty'));
});

afterAll(async () => {
  const tags = (await dockerCli(['images', '-q', REPO])).split('\n').filter(Boolean);
  if (tags.length) await dockerCli(['rmi', '-f', ...new Set(tags)]).catch(() => '');
  fs.rmSync(dir, { recursive: true, force: true });
});

test("an image docker build made of the checkout is the supervisor's build of it, step for step", async () => {
  await dockerCli(['build', '-q', '--build-arg', `BASE=${BASE}`, '-t', `${REPO}:cli`, dir]);
  const cli = (await dockerCli(['image', 'inspect', '-f', '{{.Id}}', `${REPO}:cli`])).trim();

  const image = new PersonaImage(dir, `${REPO}:latest`, BASE);
  const plan = image.plan();
  expect(plan.files).not.toContain('state/runtime.json');
  await image.build(plan);
  const ours = (await dockerCli(['image', 'inspect', '-f', '{{.Id}}', plan.tag])).trim();
  // The last step writes a fresh uuid: a build that missed any layer would be another image.
  expect(ours).toBe(cli);
});
