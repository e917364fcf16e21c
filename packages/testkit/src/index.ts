// The testkit: fakes at the outer boundary only — a mock model server and fake model CLIs.
export { startMockServer, type MockServer, type MockServerOptions } from './server.js';
export { DEFAULT_USAGE, MOCK_ENCRYPTED_REASONING, MOCK_SIGNATURE, echoTurn, type MockApi, type MockError, type MockRaw, type MockReply, type MockStep, type MockTiming, type MockToolCall, type MockTurn, type MockUsage, type RecordedRequest } from './script.js';
export {
  FAKE_CLI_DIR,
  createFakeCliHome,
  fakeCliPath,
  isProcessAlive,
  type FakeCall,
  type FakeCliHome,
  type FakeCliKind,
  type FakeStep,
} from './fake-clis.js';
export { REAL_CLI_ARGV, claudeMockEnv, codexMockEnv, findOnPath, geminiMockEnv } from './real-clis.js';
export { startVendorFaithfulServer, type FaithfulServer, type FaithfulStep, type FaithfulTurn, type StreamError } from './vendor-faithful/server.js';
export { redisServerPath, startRedis, type RedisServer } from './redis.js';
export { startRecorded, type RecordedStart } from './startup.js';
