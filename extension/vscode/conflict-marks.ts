// Conflicts with main marked in the documents of changed objects (core/conflict-marks.ts): a
// warning on the line of each conflicting attribute, in the diff editor and the Problems view,
// for the documents on screen.
import * as vscode from 'vscode';
import { objectKey } from '../core/change-documents';
import { conflictMarks } from '../core/conflict-marks';
import type { RequestDataCache } from '../core/request-data';
import { refOf } from './change-documents';
import { DisposableBase } from './disposable';

export class ConflictMarks extends DisposableBase {
  private readonly diagnostics = this._register(vscode.languages.createDiagnosticCollection('change-control'));

  constructor(private readonly cache: RequestDataCache) {
    super();
    // Only documents on screen carry marks: the sides of one change share a path, so marks left
    // on sides no longer shown would list the same conflict in Problems again under one name.
    this._register(vscode.window.onDidChangeVisibleTextEditors(() => this.markShown()));
    this._register(
      cache.onDidChange((id, parts) => {
        if (!parts.has('changes')) return;
        for (const editor of vscode.window.visibleTextEditors)
          if (refOf(editor.document.uri)?.changeRequestId === id) this.mark(editor.document);
      }),
    );
    this.markShown();
  }

  private markShown(): void {
    const shown = new Map(vscode.window.visibleTextEditors.map((e) => [e.document.uri.toString(), e.document]));
    this.diagnostics.forEach((uri) => {
      if (!shown.has(uri.toString())) this.diagnostics.delete(uri);
    });
    for (const doc of shown.values()) this.mark(doc);
  }

  private mark(doc: vscode.TextDocument): void {
    const ref = refOf(doc.uri);
    if (ref?.kind !== 'change') return;
    const change = this.cache
      .get(ref.changeRequestId)
      ?.byObject.get(objectKey({ object_type: ref.objectType, object_id: ref.objectId }));
    const marks = change ? conflictMarks(change, ref.side) : [];
    this.diagnostics.set(
      doc.uri,
      marks.map((m) => {
        const line = Math.min(m.line, Math.max(0, doc.lineCount - 1));
        const d = new vscode.Diagnostic(doc.lineAt(line).range, m.message, vscode.DiagnosticSeverity.Warning);
        d.source = 'Change Control';
        d.code = 'conflict';
        return d;
      }),
    );
  }
}
