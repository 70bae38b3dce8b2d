import * as vscode from 'vscode';

/** Owns disposables registered where they are created; disposing it disposes them, newest first. */
export abstract class DisposableBase implements vscode.Disposable {
  private readonly owned: vscode.Disposable[] = [];
  private disposed = false;

  protected _register<T extends vscode.Disposable>(d: T): T {
    if (this.disposed) d.dispose();
    else this.owned.push(d);
    return d;
  }

  protected get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.owned.reverse()) {
      try {
        d.dispose();
      } catch {
        /* keep disposing the rest */
      }
    }
    this.owned.length = 0;
  }
}
