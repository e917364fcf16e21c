// The light entry of @quickloop/models: the turn vocabulary, errors, retries and prices, without the vendor SDKs (a
// binary that may never call a model starts without loading them; the adapters are on the main entry).
export { ZERO_USAGE, addUsage, toolCall, usage, type Block, type ErrorKind, type Message, type ModelAdapter, type Stop, type ToolSpec, type TurnRequest, type TurnResult, type Usage } from './types.js';
export { billedUsage, ModelError, withBilled } from './errors.js';
export { baseUrlScrubber, secretScrubber, splitBaseUrl, type BaseUrl } from './base-url.js';
export { backoffMs, defaultSleep, withRetries, type Attempt, type RetryPolicy } from './retry.js';
export { costUsd, promptTokens, ratesFor, type Price, type Rates } from './cost.js';
export { DEFAULT_PRICE_BOOK, parsePriceBook, priceFor, usdFor, type PriceBook } from './prices.js';
export { usageTokens } from './cli/report.js';
