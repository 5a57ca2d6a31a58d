export * from './auth';
export * from './env';
export * from './fields';
export * from './http';
export * from './lifecycle';
export * from './logger';
export * from './secrets';
export * from './update-trigger';
