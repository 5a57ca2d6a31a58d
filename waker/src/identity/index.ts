export * from './file';
export * from './locale';
export * from './make';
export * from './status';
