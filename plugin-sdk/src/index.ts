export * from './context';
export * from './gestures';
export * from './manifest';
