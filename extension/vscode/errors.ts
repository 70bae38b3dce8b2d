// Failures shown to the user with actions (Retry, Sign In, Show Logs), and logged. Nothing throws
// into the UI: command handlers run through `guarded`.
import * as vscode from 'vscode';
import { asApiError, presentError } from '../core/api-error';

export interface ErrorReporterDeps {
  log: vscode.LogOutputChannel;
}

export class ErrorReporter {
  constructor(private readonly deps: ErrorReporterDeps) {}

  /** Shows the failure of `what` (not awaited by callers; the buttons run their action). */
  report(what: string, error: unknown, retry?: () => unknown): void {
    const e = asApiError(error);
    this.deps.log.error(`${what}: [${e.kind}${e.status ? ` ${e.status}` : ''}] ${e.message}`);
    const presented = presentError(what, e, { retryable: retry !== undefined });
    const show =
      e.kind === 'conflict' || e.kind === 'stale' ? vscode.window.showWarningMessage : vscode.window.showErrorMessage;
    void show(presented.message, ...presented.actions).then((choice) => {
      if (choice === 'Retry') void Promise.resolve().then(retry);
      else if (choice === 'Sign In') void vscode.commands.executeCommand('changeControl.signIn');
      else if (choice === 'Show Logs') this.deps.log.show(true);
    });
  }

  /** Runs `fn`; a failure is reported, never thrown. */
  async guarded(what: string, fn: () => Promise<unknown>, retry?: () => unknown): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.report(what, e, retry);
    }
  }
}
