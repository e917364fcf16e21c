export { createDocsReader, redactUrl, MAX_REDIRECTS, type DocsReader, type ReaderOptions, type ReadResult, type ReadOk, type ReadFailure, type Hop, type ProbeResult, type FailReason, type DocsFrom } from './reader.js';
export { htmlToMarkdown, resolveLinks, absoluteHref, DROPPED_ELEMENTS } from './markdown.js';
export { parseDocsMap, mappedFile, type DocsMapping } from './docs-map.js';
export { splitPages, pageFooter, PAGE_CHARS } from './paging.js';
export { createRateLimiter, realClock, type Clock, type RateLimiter } from './rate-limit.js';
export { markdownVariant, affordanceCandidates, isAffordance, type Affordances } from './affordances.js';
export { metaRefresh, decodeBody, MAX_BODY_BYTES } from './http.js';
export { USER_AGENT, VERSION, ROBOTS_TOKEN } from './version.js';
export { MDREAM_VERSION } from './mdream-wasm.generated.js';
