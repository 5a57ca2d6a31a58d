import Joi from 'joi';

/** The budget's settings, as the config loader gives them. */
export interface MemorySettings {
  /** FLEET_MEMORY_LIMIT_MB, or null: 80 % of each node's (or the host's) memory. */
  limitMb: number | null;
  /** FLEET_MAX_AWAKE, or null for no maximum. */
  maxAwake: number | null;
  /** FLEET_MEMORY_DEFAULT_MB: a persona's estimate before any persona was measured. */
  defaultMb: number;
  /** HOST_MEMORY_MIN_AVAILABLE_MB: 0 turns the host check off. */
  minAvailableMb: number;
}

/** The budget's variables (in the waker's schema), converted and defaulted. */
export interface MemoryEnv {
  FLEET_MEMORY_LIMIT_MB?: number;
  FLEET_MAX_AWAKE?: number;
  FLEET_MEMORY_DEFAULT_MB: number;
  HOST_MEMORY_MIN_AVAILABLE_MB: number;
}

/**
 * FLEET_MEMORY_LIMIT_MB absent: 80 % of each node's memory. FLEET_MEMORY_DEFAULT_MB: a
 * persona's estimate before any was measured (a worker with its Chromium and one page).
 * HOST_MEMORY_MIN_AVAILABLE_MB: the MemAvailable a wake must leave on this host (0: no check).
 */
export const MEMORY_SCHEMA = {
  FLEET_MEMORY_LIMIT_MB: Joi.number().integer().min(64).allow('').empty(''),
  FLEET_MAX_AWAKE: Joi.number().integer().min(1).allow('').empty(''),
  FLEET_MEMORY_DEFAULT_MB: Joi.number().integer().min(1).allow('').empty('').default(500),
  HOST_MEMORY_MIN_AVAILABLE_MB: Joi.number().integer().min(0).allow('').empty('').default(256),
};

export const memorySettings = (v: MemoryEnv): MemorySettings => ({
  limitMb: v.FLEET_MEMORY_LIMIT_MB ?? null,
  maxAwake: v.FLEET_MAX_AWAKE ?? null,
  defaultMb: v.FLEET_MEMORY_DEFAULT_MB,
  minAvailableMb: v.HOST_MEMORY_MIN_AVAILABLE_MB,
});
