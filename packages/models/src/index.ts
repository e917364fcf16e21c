// @quickloop/models: one turn interface over vendor APIs, and the adapter for model CLIs used by loops.
export { ZERO_USAGE, addUsage, toolCall, usage, type Block, type ErrorKind, type Message, type ModelAdapter, type Stop, type ToolSpec, type TurnRequest, type TurnResult, type Usage } from './types.js';
export { billedUsage, ModelError, withBilled } from './errors.js';
export { baseUrlScrubber, secretScrubber, splitBaseUrl, type BaseUrl } from './base-url.js';
export { backoffMs, defaultSleep, withRetries, type Attempt, type RetryPolicy } from './retry.js';
export { invokeCli, type CliResult, type InvokeCliOptions } from './cli/invoke.js';
export { parseCliOutput, type OutputMode, type ParsedOutput } from './cli/parse.js';
export { classifyStatus, classifyText, policyBlock, type Classified } from './cli/classify.js';
export { cliEnv, SAFE_ENV_KEYS } from './cli/env.js';
export { AnthropicAdapter, type AnthropicAdapterOptions } from './api/anthropic.js';
export { OpenAIResponsesAdapter, type OpenAIResponsesAdapterOptions } from './api/openai-responses.js';
export { toModelError, retryAfterMs } from './api/classify.js';
export { costUsd, promptTokens, ratesFor, type Price, type Rates } from './cost.js';
export { conventionalExitCode, usageTokens } from './cli/report.js';
export { OpenAIChatAdapter, type OpenAIChatAdapterOptions } from './api/openai-chat.js';
export { GeminiAdapter, type GeminiAdapterOptions } from './api/gemini.js';
export { DEFAULT_PRICE_BOOK, parsePriceBook, priceFor, usdFor, type PriceBook } from './prices.js';
