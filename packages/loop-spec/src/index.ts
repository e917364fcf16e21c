// Public surface of @quickloop/loop-spec: the resolved-spec types, compile, load, render and lint.
export * from './types.js';
