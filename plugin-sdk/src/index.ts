export * from './context';
export * from './gestures';
export * from './manifest';
export * from './plugin';
export * from './moves';
