// The shape of a task once the schema has accepted it: what the semantic rules and normalisation read.

export type StringOrList = string | string[];

export interface RawWaitHttp {
  path?: string;
  url?: string;
  status?: number;
  contains?: StringOrList;
  matches?: StringOrList;
  json?: Record<string, unknown>;
  timeout?: number;
}

export interface RawSuccess {
  script?: string;
  file?: string;
  serve?: string;
  expect_output?: { contains?: StringOrList; matches?: StringOrList };
  wait_http?: RawWaitHttp;
}

export interface RawTask {
  name: string;
  goal: string;
  image?: string;
  docs: { path?: string[]; entrypoint?: string; allow?: string[] };
  network?: { allow?: string[]; only?: string[] };
  setup?: string[];
  replay?: string[];
  success: RawSuccess;
  budgets?: Partial<Record<'max_turns' | 'max_seconds' | 'max_command_seconds' | 'max_output_chars' | 'max_tokens', number>>;
}

export const list = (v: StringOrList | undefined): string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);
