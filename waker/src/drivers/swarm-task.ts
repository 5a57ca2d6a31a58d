import crypto from 'node:crypto';
import type Docker from 'dockerode';
import { errorMessage } from '@persona-browser/service-kit';
import { latestTask, readTask } from './swarm-state';
import { taskPhase } from './swarm-plan';

export interface OneShot {
  /** A prefix: a random suffix makes each run's service name its own. */
  name: string;
  image: string;
  /** Hostname of the node it must run on. */
  node: string;
  /** Replaces the image's entry point. */
  command: string[];
  mounts: Docker.MountSettings[];
  labels: Record<string, string>;
  timeoutMs: number;
}

export interface OneShotResult {
  /** The task's final state: `complete` when the command exited 0. */
  state: string;
  exitCode: number | null;
  error: string;
}

/**
 * Runs one command once on one node, as a Swarm service of one task that is never restarted,
 * and removes the service afterwards whatever happened. What a node-local job needs (a folder
 * made on the node that will hold it) without a shell on that node.
 */
export async function runOnNode(docker: Docker, job: OneShot): Promise<OneShotResult> {
  const name = `${job.name}-${crypto.randomBytes(3).toString('hex')}`;
  const service = await docker.createService({
    Name: name,
    Labels: job.labels,
    TaskTemplate: {
      ContainerSpec: { Image: job.image, Command: job.command, Mounts: job.mounts },
      RestartPolicy: { Condition: 'none' },
      Placement: { Constraints: [`node.hostname==${job.node}`] },
    },
    Mode: { Replicated: { Replicas: 1 } },
  });
  try {
    const until = Date.now() + job.timeoutMs;
    for (;;) {
      const tasks = (await docker.listTasks({ filters: { service: [service.id] } })).map(readTask);
      const task = latestTask(tasks, service.id);
      if (task && taskPhase(task.state) === 'ended') {
        return { state: task.state, exitCode: task.exitCode, error: task.error };
      }
      if (Date.now() > until) {
        return {
          state: task?.state ?? 'none',
          exitCode: null,
          error: `did not end within ${Math.round(job.timeoutMs / 1000)} s${task?.error ? `: ${task.error}` : ''}`,
        };
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    return { state: 'unknown', exitCode: null, error: errorMessage(err) };
  } finally {
    await service.remove().catch(() => undefined);
  }
}
