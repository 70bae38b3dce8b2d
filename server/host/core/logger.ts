export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const consoleLogger: Logger = {
  info: (m) => process.stderr.write(`[info] ${m}\n`),
  warn: (m) => process.stderr.write(`[warn] ${m}\n`),
  error: (m) => process.stderr.write(`[error] ${m}\n`),
};

/** Keeps messages in memory; used by tests to assert on what was logged. */
export class MemoryLogger implements Logger {
  readonly lines: string[] = [];
  info(m: string): void {
    this.lines.push(`info: ${m}`);
  }
  warn(m: string): void {
    this.lines.push(`warn: ${m}`);
  }
  error(m: string): void {
    this.lines.push(`error: ${m}`);
  }
}
