export * from './commit';
export * from './env-file';
export * from './metrics';
export * from './paths';
export * from './ping';
export * from './status';
export * from './waker';
