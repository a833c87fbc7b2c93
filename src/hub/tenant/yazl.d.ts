// yazl 3 ships no types; this declares the part the tenant export uses.
declare module 'yazl' {
  import type { Readable } from 'node:stream';
  export class ZipFile {
    outputStream: Readable;
    addBuffer(buffer: Buffer, metadataPath: string, options?: { mtime?: Date; mode?: number; compress?: boolean }): void;
    end(options?: { forceZip64Format?: boolean }, callback?: (finalSize: number) => void): void;
  }
}
