// Redaction globs with Looper's semantics (Python fnmatch on every path suffix), from loop-spec's one implementation.
export { fnmatch, isRedactedPath as isRedacted } from '@quickloop/loop-spec';
