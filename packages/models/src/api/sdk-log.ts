// The vendor SDKs' own logging (ANTHROPIC_LOG, OPENAI_LOG), kept off stdout: their default logger is the console,
// whose info and debug lines go to stdout, which is the event stream.
import { format } from 'node:util';

/** Where one formatted log line goes (it may span lines: the SDKs log whole requests). */
export type LogLine = (line: string) => void;

const toStderr: LogLine = (line) => {
  process.stderr.write(`${line}\n`);
};

/** `scrub` takes the adapter's secrets out of each line: the SDKs log request URLs, a gateway's key in their query. */
export function sdkLogger(adapter: string, log: LogLine = toStderr, scrub: (text: string) => string = (s) => s): Record<'error' | 'warn' | 'info' | 'debug', (...args: unknown[]) => void> {
  const at =
    (level: string) =>
    (...args: unknown[]) =>
      log(scrub(`${adapter} sdk ${level}: ${format(...args)}`));
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}
