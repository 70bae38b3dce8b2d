// Conflicts with main marked in the documents of changed objects (core/conflict-marks.ts): a
// warning on the line of each conflicting attribute, in the diff editor and the Problems view.
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
    this._register(vscode.workspace.onDidOpenTextDocument((doc) => this.mark(doc)));
    this._register(vscode.workspace.onDidCloseTextDocument((doc) => this.diagnostics.delete(doc.uri)));
    this._register(
      cache.onDidChange((id, parts) => {
        if (!parts.has('changes')) return;
        for (const doc of vscode.workspace.textDocuments) if (refOf(doc.uri)?.changeRequestId === id) this.mark(doc);
      }),
    );
    for (const doc of vscode.workspace.textDocuments) this.mark(doc);
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
