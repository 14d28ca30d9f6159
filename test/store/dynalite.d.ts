// dynalite ships no types; the part the cross-check uses.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    readonly createTableMs?: number;
    readonly deleteTableMs?: number;
    readonly updateTableMs?: number;
    readonly path?: string;
  }
  const dynalite: (options?: DynaliteOptions) => Server;
  export default dynalite;
}
