/** STUB — to be implemented (issue 4, media). */
export interface MediaStoreOptions {
  ttlMs: number;
  capBytes: number;
}

export class MediaStore {
  constructor(readonly opts: MediaStoreOptions) {}
}
