export * from './metrics';
export * from './paths';
export * from './ping';
export * from './status';
