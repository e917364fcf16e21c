// A finding about a task file (error, warning or note) and the one-line text people read.
import { CODES, type Code, type Severity } from './codes.js';

export interface Finding {
  code: Code;
  severity: Severity;
  /** One line: the field, what is wrong, and what would be right. */
  message: string;
  /** Dotted path of the field concerned (`docs.path[1]`), when there is one. */
  field?: string;
  line?: number;
  column?: number;
  /** The task's name, once it was read. */
  task?: string;
}

export interface Position {
  line: number;
  column: number;
}

export function finding(code: Code, message: string, extra: { field?: string; at?: Position | undefined; task?: string } = {}): Finding {
  const f: Finding = { code, severity: CODES[code].severity, message: oneLine(message) };
  if (extra.field !== undefined && extra.field !== '') f.field = extra.field;
  if (extra.at) {
    f.line = extra.at.line;
    f.column = extra.at.column;
  }
  if (extra.task !== undefined) f.task = extra.task;
  return f;
}

/** Messages are one line by contract: a stray newline from a parser or a value never splits them. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/** `file:line:col: message`, the shape editors and people both read. */
export function located(display: string, f: Finding): string {
  const where = f.line !== undefined ? `${display}:${f.line}${f.column !== undefined ? `:${f.column}` : ''}` : display;
  return `${where}: ${f.message}`;
}

/** A value quoted for a message, clipped so a long script never floods the line. */
export function quote(value: unknown, max = 60): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  const clipped = text.length > max ? `${text.slice(0, max)}…` : text;
  // A control character left in (a tab, a bell, an escape) is shown as its code, never acted on by a terminal.
  // Lines are joined, but the ends are kept: a trailing space may be what is wrong with the value.
  return `'${clipped.replace(/\s*[\r\n]+\s*/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}'`;
}

/** Dotted field path from segments: ['docs', 'path', 1] → `docs.path[1]`. */
export function fieldPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out;
}
