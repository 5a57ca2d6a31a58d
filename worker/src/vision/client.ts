/** STUB — to be implemented (issue 4, vision). */
export interface VisionOptions {
  baseUrl: string;
  model: string;
  keyGratis: string | null;
  keyPaga: string | null;
  priceInputPerMTok: number;
  priceOutputPerMTok: number;
  timeoutMs: number;
}

export class VisionClient {
  constructor(readonly opts: VisionOptions) {}
}
