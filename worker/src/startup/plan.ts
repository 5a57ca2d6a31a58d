/**
 * Runs one named start-up step and keeps its stop: the service kit's `Lifecycle` is one. Stops
 * run in reverse order of start; a step that fails to start stops the ones before it.
 */
export interface StepRunner {
  step<T>(name: string, start: () => T | Promise<T>, stop?: (value: T) => unknown): Promise<T>;
}

/**
 * One start-up step: what it starts from what the earlier steps gave (`ready`), and how that
 * stops. What `start` returns joins `ready` for the steps after it.
 */
export interface StartupStep<In, Out extends object> {
  readonly name: string;
  start(ready: In): Out | Promise<Out>;
  stop?(started: Out, ready: In): unknown;
}

/**
 * A program's start-up as an ordered list of steps. The list is typed as it grows: a step can
 * only ask for what the steps before it give, so the order is checked when the program builds.
 * Running it hands each step to a `StepRunner`, which stops them in reverse.
 */
export class StartupPlan<Ready extends object> {
  private constructor(
    /** The steps' names in start order. */
    readonly names: readonly string[],
    private readonly runSteps: (runner: StepRunner) => Promise<Ready>,
  ) {}

  /** A plan with no step yet; `given` is what the first step starts from. */
  static begin<Given extends object>(given: Given): StartupPlan<Given> {
    return new StartupPlan([], () => Promise.resolve(given));
  }

  /** This plan with `step` after its last step. */
  then<Out extends object>(step: StartupStep<Ready, Out>): StartupPlan<Ready & Out> {
    return new StartupPlan([...this.names, step.name], async (runner) => {
      const ready = await this.runSteps(runner);
      const started = await runner.step(
        step.name,
        () => step.start(ready),
        step.stop && ((out: Out) => step.stop?.(out, ready)),
      );
      return { ...ready, ...started };
    });
  }

  /** Starts every step in order; resolves with what they all gave once the last one started. */
  run(runner: StepRunner): Promise<Ready> {
    return this.runSteps(runner);
  }
}
