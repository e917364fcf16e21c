// Node's fetch runs on its own copy of undici, which no package can import: what a request without a
// dispatcher goes through is found where that copy keeps it, and other dispatchers are made like it.

/** What fetch calls of a dispatcher (undici's type names much more). */
export interface Dispatcher {
  dispatch(options: Record<string, unknown>, handler: unknown): boolean;
}

/** Where Node's undici keeps its global dispatcher (the Agent a request with none goes through). */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * Node's global dispatcher, once fetch has loaded undici; its constructor makes an Agent of that same
 * undici. Throws where there is none (a runtime whose fetch is not undici's).
 */
export function globalDispatcher(): Dispatcher & { constructor: new (options: unknown) => Dispatcher } {
  const global = (globalThis as unknown as Record<symbol, (Dispatcher & { constructor: new (options: unknown) => Dispatcher }) | undefined>)[GLOBAL_DISPATCHER];
  if (typeof global?.dispatch !== 'function') throw new Error("undici's global dispatcher is not available");
  return global;
}
