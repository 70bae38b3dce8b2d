// A branch's objects as documents of the `change-control` scheme (paths in
// core/branch-documents.ts): read with X-NetBox-Branch, saved back into the branch (a full write),
// created from a template, deleted; read-only where the user may not write. A refused save shows
// its problems in the Problems panel and the document stays dirty; a save names the version the
// document was read from (If-Match), and one the service refuses because someone else wrote a
// newer version since (412) offers a choice (Compare, Overwrite, Discard). The marks of what the
// branch changed decorate the documents (Explorer, tabs, the Branch Objects view).
// ChangeDocuments (change-documents.ts) owns the scheme and hands the `/branches/` paths here.
import * as vscode from 'vscode';
import type { BranchObjectTypeAccess } from '../../contract/api/branching';
import { asApiError, presentError } from '../core/api-error';
import type { Versioned } from '../core/api-client';
import {
  afterStale,
  branchFolder,
  missingRequired,
  newObjectDocument,
  newObjectTemplate,
  objectDocument,
  objectFileName,
  objectText,
  pageFileNames,
  parseBranchAddress,
  parseObjectText,
  problemsOfRefusal,
  savePlan,
  saveVerdict,
  VersionClock,
  type BranchDocumentRef,
  type DocumentBase,
  type DocumentProblem,
} from '../core/branch-documents';
import type { ApiObject, BranchContext, BranchObjectsClient } from '../core/branch-objects-client';
import { objectChangeOf, type ObjectChange } from '../core/branch-objects';
import { CHANGE_DECORATION, changeKind, DOCUMENT_SCHEME } from '../core/change-documents';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';

/** The client's schemas (zod) are built at first use, not at activation. */
const objectsClientModule = () =>
  require('../core/branch-objects-client') as typeof import('../core/branch-objects-client');

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** How long what a user may do in a branch is trusted before it is read again. */
const CONTEXT_TTL_MS = 60_000;
/** Objects of a type a workspace folder lists (the Branch Objects view pages through all). */
export const FOLDER_LISTING_LIMIT = 1000;

export function branchUri(address: { path: string; query: string }): vscode.Uri {
  return vscode.Uri.from({ scheme: DOCUMENT_SCHEME, ...address });
}

export function branchRefOf(uri: vscode.Uri): BranchDocumentRef | null {
  return uri.scheme === DOCUMENT_SCHEME ? parseBranchAddress({ path: uri.path, query: uri.query }) : null;
}

/** A document's key without its query: one object, whichever version a document shows. */
const pathKey = (uri: vscode.Uri) => uri.with({ query: '', fragment: '' }).toString();

export interface Resolved {
  ctx: BranchContext;
  type: BranchObjectTypeAccess;
  id: number;
}

interface NewObject {
  branch: string;
  objectType: string;
  text: string;
  /** The object once the first save created it: later saves write it. */
  createdId: number | null;
}

export interface BranchDocumentsDeps {
  connection: Connection;
  log: vscode.LogOutputChannel;
}

/** What the branch changed, per document path: the decorations read it, the view and listings fill it. */
export class BranchChangeMarks extends DisposableBase implements vscode.FileDecorationProvider {
  private readonly marks = new Map<string, ObjectChange>();
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri[] | undefined>());
  readonly onDidChangeFileDecorations = this.changed.event;

  constructor() {
    super();
    this._register(vscode.window.registerFileDecorationProvider(this));
  }

  /** Records what the branch did to the objects of these documents (null: nothing). */
  set(entries: Array<[vscode.Uri, ObjectChange | null]>): void {
    const moved: vscode.Uri[] = [];
    for (const [uri, change] of entries) {
      const key = pathKey(uri);
      const before = this.marks.get(key);
      if (change) this.marks.set(key, change);
      else this.marks.delete(key);
      if (before?.action !== change?.action || before?.conflicts?.length !== change?.conflicts?.length)
        moved.push(uri.with({ query: '' }));
    }
    if (moved.length) this.changed.fire(moved);
  }

  get(uri: vscode.Uri): ObjectChange | undefined {
    return this.marks.get(pathKey(uri));
  }

  clear(): void {
    this.marks.clear();
    this.changed.fire(undefined);
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    if (!branchRefOf(uri)) return undefined;
    const change = this.marks.get(pathKey(uri));
    if (!change) return undefined;
    const look = CHANGE_DECORATION[changeKind(change)];
    return { badge: look.badge, tooltip: look.tooltip, color: new vscode.ThemeColor(look.color), propagate: true };
  }
}

export class BranchDocuments extends DisposableBase {
  private readonly changedFiles = this._register(new vscode.EventEmitter<vscode.FileChangeEvent[]>());
  /** ChangeDocuments forwards these as the scheme's own events. */
  readonly onDidChangeFile = this.changedFiles.event;
  private readonly wrote = this._register(new vscode.EventEmitter<{ branch: string; objectType: string }>());
  /** An object of a branch was written, created, deleted or reverted here: views of the branch refresh. */
  readonly onDidWrite = this.wrote.event;
  readonly marks = this._register(new BranchChangeMarks());
  readonly diagnostics = this._register(vscode.languages.createDiagnosticCollection('change-control'));

  private readonly contexts = new Map<string, { at: number; ctx: Promise<BranchContext | null> }>();
  /** Object ids by document path, as listings and lookups found them. */
  private readonly ids = new Map<string, number>();
  private readonly clock = new VersionClock();
  /** Per document: the branch's version it was read from or last saved as (its text and ETag). */
  private readonly bases = new Map<string, DocumentBase>();
  private readonly fresh = new Map<string, NewObject>();
  private newKeys = 0;

  constructor(private readonly deps: BranchDocumentsDeps) {
    super();
    this._register(vscode.workspace.onDidCloseTextDocument((d) => this.diagnostics.delete(d.uri)));
    this._register(
      deps.connection.onDidChange(() => {
        this.contexts.clear();
        this.marks.clear();
      }),
    );
  }

  // ------------------------------------------------------------------ lookups

  async objectsClient(): Promise<BranchObjectsClient> {
    const client = await this.deps.connection.settledClient();
    if (!client)
      throw vscode.FileSystemError.Unavailable('Not connected to the Change Control service: sign in first.');
    return new (objectsClientModule().BranchObjectsClient)(client);
  }

  /** The branch of that name and what the user may do in it (read again after a minute, or when told). */
  async context(branch: string): Promise<BranchContext | null> {
    const known = this.contexts.get(branch);
    if (known && Date.now() - known.at < CONTEXT_TTL_MS) return known.ctx;
    const ctx = this.objectsClient().then((c) => c.context(branch));
    this.contexts.set(branch, { at: Date.now(), ctx });
    ctx.catch(() => this.contexts.delete(branch));
    return ctx;
  }

  forgetContext(branch?: string): void {
    if (branch === undefined) this.contexts.clear();
    else this.contexts.delete(branch);
  }

  private async requireContext(branch: string): Promise<BranchContext> {
    let ctx: BranchContext | null;
    try {
      ctx = await this.context(branch);
    } catch (e) {
      throw this.unavailable('Reading the branch', e);
    }
    if (!ctx) throw vscode.FileSystemError.FileNotFound(`There is no branch "${branch}" (or you may not see it).`);
    return ctx;
  }

  private typeOf(ctx: BranchContext, objectType: string): BranchObjectTypeAccess {
    const type = ctx.access.object_types.find((t) => t.object_type === objectType);
    if (!type?.view) throw vscode.FileSystemError.FileNotFound(`No ${objectType} objects you may see here.`);
    return type;
  }

  /** Remembers which object a document names (listings, lookups, creations). */
  remember(uri: vscode.Uri, id: number): void {
    this.ids.set(pathKey(uri), id);
  }

  private unavailable(what: string, e: unknown): vscode.FileSystemError {
    const message = presentError(what, e, { retryable: false }).message;
    const kind = asApiError(e).kind;
    if (kind === 'notFound') return vscode.FileSystemError.FileNotFound(message);
    if (kind === 'forbidden') return vscode.FileSystemError.NoPermissions(message);
    return vscode.FileSystemError.Unavailable(message);
  }

  private async resolve(uri: vscode.Uri, ref: Extract<BranchDocumentRef, { kind: 'object' }>): Promise<Resolved> {
    const ctx = await this.requireContext(ref.branch);
    const type = this.typeOf(ctx, ref.objectType);
    if (ref.file.id !== null) return { ctx, type, id: ref.file.id };
    const known = this.ids.get(pathKey(uri));
    if (known !== undefined) return { ctx, type, id: known };
    const objects = await this.objectsClient();
    let page;
    try {
      page = await objects.listObjects(ctx, type, { name: ref.file.name, limit: 2 }, { main: ref.version === 'main' });
    } catch (e) {
      throw this.unavailable(`Finding ${ref.file.name}`, e);
    }
    if (page.count === 1) {
      this.remember(uri, page.results[0]!.id);
      return { ctx, type, id: page.results[0]!.id };
    }
    if (page.count === 0) throw vscode.FileSystemError.FileNotFound(uri);
    throw vscode.FileSystemError.FileNotFound(
      `${page.count} ${type.display} objects are named "${ref.file.name}": open the one you mean from the Branch Objects view (its file name then carries its id).`,
    );
  }

  /** The document's object as the version it shows, its text, and its version (ETag). */
  private async read(
    uri: vscode.Uri,
    ref: Extract<BranchDocumentRef, { kind: 'object' }>,
  ): Promise<{ resolved: Resolved; object: ApiObject; text: string; etag: string | null }> {
    const resolved = await this.resolve(uri, ref);
    const objects = await this.objectsClient();
    let read: Versioned<ApiObject>;
    try {
      read = await objects.getObject(resolved.ctx, resolved.type, resolved.id, { main: ref.version === 'main' });
    } catch (e) {
      throw this.unavailable(
        `Reading ${ref.version === 'main' ? "main's" : "the branch's"} ${resolved.type.display} ${resolved.id}`,
        e,
      );
    }
    return { resolved, object: read.value, text: objectText(read.value), etag: read.etag };
  }

  /** Whether the user may write this object's document: a ready branch they may write, and change on its type. */
  private writable(ctx: BranchContext, type: BranchObjectTypeAccess): boolean {
    return ctx.access.write && type.change;
  }

  // ------------------------------------------------------------------ the file system

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const ref = branchRefOf(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    const dir = { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
    switch (ref.kind) {
      case 'root':
        return { ...dir, permissions: vscode.FilePermission.Readonly };
      case 'branch':
        await this.requireContext(ref.branch);
        return { ...dir, permissions: vscode.FilePermission.Readonly };
      case 'type':
        this.typeOf(await this.requireContext(ref.branch), ref.objectType);
        return { ...dir, permissions: vscode.FilePermission.Readonly };
      case 'new': {
        const pending = this.pendingOf(uri);
        const created = pending.createdId;
        if (created === null)
          return { type: vscode.FileType.File, ctime: 0, mtime: 1, size: encoder.encode(pending.text).byteLength };
        return this.objectStat(uri, {
          kind: 'object',
          branch: ref.branch,
          objectType: ref.objectType,
          file: { id: created, label: null },
          version: 'branch',
        });
      }
      case 'object':
        return this.objectStat(uri, ref);
    }
  }

  private async objectStat(
    uri: vscode.Uri,
    ref: Extract<BranchDocumentRef, { kind: 'object' }>,
  ): Promise<vscode.FileStat> {
    const key = uri.toString();
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    const known = this.clock.get(key);
    // While the user edits, VS Code is told the version the document was read from: whether the
    // branch moved since is for the save to find out (and to offer the choice), not VS Code's own
    // check, which misses a change of the same length.
    if (open?.isDirty && known) {
      const ctx = await this.requireContext(ref.branch);
      return this.fileStat(known, ref.version === 'branch' && this.writable(ctx, this.typeOf(ctx, ref.objectType)));
    }
    const { resolved, text } = await this.read(uri, ref);
    const version = this.clock.observe(key, text, Date.now());
    return this.fileStat(version, ref.version === 'branch' && this.writable(resolved.ctx, resolved.type));
  }

  private fileStat(version: { text: string; mtime: number }, writable: boolean): vscode.FileStat {
    return {
      type: vscode.FileType.File,
      ctime: 0,
      mtime: version.mtime,
      size: encoder.encode(version.text).byteLength,
      permissions: writable ? undefined : vscode.FilePermission.Readonly,
    };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const ref = branchRefOf(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    if (ref.kind === 'new') {
      const pending = this.pendingOf(uri);
      if (pending.createdId === null) return encoder.encode(pending.text);
      return this.readObject(uri, {
        kind: 'object',
        branch: ref.branch,
        objectType: ref.objectType,
        file: { id: pending.createdId, label: null },
        version: 'branch',
      });
    }
    if (ref.kind !== 'object') throw vscode.FileSystemError.FileIsADirectory(uri);
    return this.readObject(uri, ref);
  }

  private async readObject(uri: vscode.Uri, ref: Extract<BranchDocumentRef, { kind: 'object' }>): Promise<Uint8Array> {
    const { resolved, text, etag } = await this.read(uri, ref);
    this.clock.observe(uri.toString(), text, Date.now());
    if (ref.version === 'branch') {
      this.bases.set(uri.toString(), { text, etag });
      void this.markOne(uri, resolved);
    }
    return encoder.encode(text);
  }

  async readDirectory(uri: vscode.Uri): Promise<[string, vscode.FileType][]> {
    const ref = branchRefOf(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    if (ref.kind === 'root') {
      const objects = await this.objectsClient();
      const branches = await objects.client.listBranches({ status: 'ready' });
      return branches.map((b) => [branchFolder(b.name).path.split('/')[2]!, vscode.FileType.Directory]);
    }
    if (ref.kind === 'branch') {
      const ctx = await this.requireContext(ref.branch);
      return ctx.access.object_types.filter((t) => t.view).map((t) => [t.object_type, vscode.FileType.Directory]);
    }
    if (ref.kind !== 'type') throw vscode.FileSystemError.FileNotADirectory(uri);
    const ctx = await this.requireContext(ref.branch);
    const type = this.typeOf(ctx, ref.objectType);
    const objects = await this.objectsClient();
    try {
      // The object after the listed ones is read too: a name it shares takes the id beside it.
      const [page, next, changes] = await Promise.all([
        objects.listObjects(ctx, type, { ordering: 'name', limit: FOLDER_LISTING_LIMIT }),
        objects.listObjects(ctx, type, { ordering: 'name', offset: FOLDER_LISTING_LIMIT, limit: 1 }),
        objects.changes(ctx.branch.id, type.object_type, { limit: FOLDER_LISTING_LIMIT }),
      ]);
      const listed = page.results.slice(0, FOLDER_LISTING_LIMIT);
      const names = pageFileNames(listed, { after: next.results[0] });
      const byObject = new Map(changes.results.map((c) => [c.object_id, objectChangeOf(c)]));
      const marks: Array<[vscode.Uri, ObjectChange | null]> = [];
      listed.forEach((o, i) => {
        const doc = branchUri(objectDocument(ref.branch, type.object_type, names[i]!));
        this.remember(doc, o.id);
        marks.push([doc, byObject.get(o.id) ?? null]);
      });
      this.marks.set(marks);
      if (page.count > FOLDER_LISTING_LIMIT)
        this.deps.log.info(
          `${ref.branch}/${type.object_type}: the folder lists the first ${FOLDER_LISTING_LIMIT} of ${page.count} objects by name`,
        );
      return names.map((n) => [n, vscode.FileType.File]);
    } catch (e) {
      throw this.unavailable(`Listing the ${type.display} objects of ${ref.branch}`, e);
    }
  }

  /** Marks the object of one document with the branch's change of it (after a read or a write). */
  private async markOne(uri: vscode.Uri, resolved: Resolved): Promise<void> {
    try {
      const objects = await this.objectsClient();
      const change = await objects.changeOf(resolved.ctx.branch.id, resolved.type.object_type, resolved.id);
      this.marks.set([[uri, change ? objectChangeOf(change) : null]]);
    } catch (e) {
      this.deps.log.warn(`reading the change of ${uri.path}: ${(e as Error).message}`);
    }
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const ref = branchRefOf(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    if (ref.kind === 'new') {
      const pending = this.pendingOf(uri);
      if (pending.createdId === null) return this.create(uri, ref, pending, decoder.decode(content));
      return this.save(
        uri,
        {
          kind: 'object',
          branch: ref.branch,
          objectType: ref.objectType,
          file: { id: pending.createdId, label: null },
          version: 'branch',
        },
        decoder.decode(content),
      );
    }
    if (ref.kind !== 'object')
      throw vscode.FileSystemError.NoPermissions('Create objects with Change Control: New Object…, not as files.');
    if (ref.version !== 'branch')
      throw vscode.FileSystemError.NoPermissions('This version of the object is read-only.');
    return this.save(uri, ref, decoder.decode(content));
  }

  /** Shows a document's problems, and fails the save with what to do about them. */
  private refuse(uri: vscode.Uri, text: string, problems: DocumentProblem[], what: string): never {
    const lines = text.split('\n');
    this.diagnostics.set(
      uri,
      problems.map((p) => {
        const line = Math.min(p.line, Math.max(0, lines.length - 1));
        const d = new vscode.Diagnostic(
          new vscode.Range(line, 0, line, lines[line]?.length ?? 0),
          p.message,
          p.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
        );
        d.source = 'Change Control';
        return d;
      }),
    );
    const first = problems.find((p) => p.severity === 'error') ?? problems[0];
    throw vscode.FileSystemError.Unavailable(
      `${what}: ${first?.message ?? 'see the Problems panel'}${problems.length > 1 ? ` (and ${problems.length - 1} more in the Problems panel)` : ''}. Nothing was saved.`,
    );
  }

  private async save(
    uri: vscode.Uri,
    ref: Extract<BranchDocumentRef, { kind: 'object' }>,
    text: string,
  ): Promise<void> {
    const parsed = parseObjectText(text);
    const name = uri.path.split('/').pop()!;
    if (!parsed.ok) this.refuse(uri, text, parsed.problems, `${name} is not a valid object`);
    const resolved = await this.resolve(uri, ref);
    if (!this.writable(resolved.ctx, resolved.type))
      throw vscode.FileSystemError.NoPermissions(
        resolved.ctx.access.reason ?? `You may not change ${resolved.type.display} objects.`,
      );
    const key = uri.toString();
    const current = async (): Promise<DocumentBase> => {
      const { text: now, etag } = await this.read(uri, ref);
      return { text: now, etag };
    };
    const plan = savePlan(this.bases.get(key));
    let ifMatch: string | undefined;
    if (plan.kind === 'write') ifMatch = plan.ifMatch;
    else {
      const now = await current();
      if (plan.kind === 'choose' || saveVerdict(plan.base, now.text) === 'conflict')
        this.conflict(uri, ref.branch, now);
    }
    const objects = await this.objectsClient();
    let written: Versioned<ApiObject>;
    let retried = false;
    for (;;) {
      try {
        written = await objects.replaceObject(resolved.ctx, resolved.type, resolved.id, parsed.attrs, { ifMatch });
        break;
      } catch (e) {
        const err = asApiError(e);
        if (err.kind === 'stale') {
          const now = await current();
          const next = afterStale(this.bases.get(key), now, retried);
          if (next.kind === 'choose') this.conflict(uri, ref.branch, now);
          this.deps.log.info(
            `saving ${uri.path}: someone saved the same attributes meanwhile; writing over that version`,
          );
          ifMatch = next.ifMatch;
          retried = true;
          continue;
        }
        if (err.kind === 'invalid') this.refuse(uri, text, problemsOfRefusal(text, err), `The service refused ${name}`);
        this.deps.log.warn(`saving ${uri.path}: ${err.message}`);
        throw this.unavailable(`Saving ${name}`, e);
      }
    }
    this.afterWrite(uri, written, parsed.warnings, ref.branch, resolved);
    this.deps.log.info(`saved ${resolved.type.object_type} ${resolved.id} in branch ${ref.branch}`);
    // Renamed: the document named by its old name gives way to the object's own.
    const object = written.value;
    if (ref.file.id === null && object.name !== ref.file.name)
      setTimeout(() => void this.replaceTab(uri, resolved.ctx, resolved.type, object), 0);
  }

  /** Refuses a save over a version someone else wrote since (`now`), offering the choice. */
  private conflict(uri: vscode.Uri, branch: string, now: DocumentBase): never {
    const name = uri.path.split('/').pop()!;
    void this.offerConflictChoice(uri, now);
    throw vscode.FileSystemError.Unavailable(
      `${name} was changed in branch ${branch} since you opened it: compare, overwrite or discard your changes.`,
    );
  }

  private afterWrite(
    uri: vscode.Uri,
    written: Versioned<ApiObject>,
    warnings: DocumentProblem[],
    branch: string,
    resolved: Resolved,
  ): void {
    const key = uri.toString();
    const text = objectText(written.value);
    this.bases.set(key, { text, etag: written.etag });
    this.clock.observe(key, text, Date.now());
    if (warnings.length) this.refuseWarningsOnly(uri, warnings);
    else this.diagnostics.delete(uri);
    void this.markOne(uri, resolved);
    this.wrote.fire({ branch, objectType: resolved.type.object_type });
  }

  private refuseWarningsOnly(uri: vscode.Uri, warnings: DocumentProblem[]): void {
    this.diagnostics.set(
      uri,
      warnings.map((p) => {
        const d = new vscode.Diagnostic(
          new vscode.Range(p.line, 0, p.line, 1000),
          p.message,
          vscode.DiagnosticSeverity.Warning,
        );
        d.source = 'Change Control';
        return d;
      }),
    );
  }

  /**
   * The choice VS Code offers for a file changed on disk, for an object changed in the branch
   * (`current`: its version now). Compare and Overwrite make it the version the next save names:
   * Overwrite saves at once, and is refused again if the object moved once more meanwhile.
   */
  private async offerConflictChoice(uri: vscode.Uri, current: DocumentBase): Promise<void> {
    const name = uri.path.split('/').pop()!;
    const choice = await vscode.window.showWarningMessage(
      `${name} was changed in the branch since you opened it.`,
      {
        modal: true,
        detail:
          'Someone else saved this object in the branch after you opened it; your version is not saved. Compare the two versions, overwrite theirs with yours, or discard your changes.',
      },
      'Compare',
      'Overwrite',
      'Discard',
    );
    const key = uri.toString();
    if (choice === 'Compare') {
      // Seen now: the next save writes over this version (and is refused again if it moves once more).
      this.bases.set(key, current);
      await vscode.commands.executeCommand(
        'vscode.diff',
        uri.with({ query: 'version=branch-now' }),
        uri,
        `${name} (in the branch now) ↔ yours`,
      );
    } else if (choice === 'Overwrite') {
      this.bases.set(key, current);
      await vscode.workspace.save(uri);
    } else if (choice === 'Discard') {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
      if (doc) {
        await vscode.window.showTextDocument(doc);
        await vscode.commands.executeCommand('workbench.action.files.revert');
      }
    }
  }

  // ------------------------------------------------------------------ new objects

  /** A new object's document in the branch: its template, created in the branch on its first save. */
  newObject(branch: string, type: BranchObjectTypeAccess): vscode.Uri {
    const key = `${Date.now().toString(36)}-${++this.newKeys}`;
    const uri = branchUri(newObjectDocument(branch, type.object_type, type.display, key));
    this.fresh.set(key, {
      branch,
      objectType: type.object_type,
      text: newObjectTemplate(type.object_type, type.display, branch),
      createdId: null,
    });
    return uri;
  }

  private pendingOf(uri: vscode.Uri): NewObject {
    const ref = branchRefOf(uri);
    const pending = ref?.kind === 'new' ? this.fresh.get(ref.key) : undefined;
    if (!pending) throw vscode.FileSystemError.FileNotFound('This new object was not saved: run New Object… again.');
    return pending;
  }

  private async create(
    uri: vscode.Uri,
    ref: Extract<BranchDocumentRef, { kind: 'new' }>,
    pending: NewObject,
    text: string,
  ): Promise<void> {
    const parsed = parseObjectText(text);
    if (!parsed.ok) this.refuse(uri, text, parsed.problems, 'The new object is not valid');
    const missing = missingRequired(ref.objectType, text, parsed.attrs);
    if (missing.length) this.refuse(uri, text, missing, 'The new object is not complete');
    const ctx = await this.requireContext(ref.branch);
    const type = this.typeOf(ctx, ref.objectType);
    const objects = await this.objectsClient();
    let written: Versioned<ApiObject>;
    try {
      written = await objects.createObject(ctx, type, parsed.attrs);
    } catch (e) {
      const err = asApiError(e);
      if (err.kind === 'invalid')
        this.refuse(uri, text, problemsOfRefusal(text, err), 'The service refused the new object');
      throw this.unavailable(`Creating the ${type.display}`, e);
    }
    const created = written.value;
    pending.createdId = created.id;
    pending.text = text;
    this.afterWrite(uri, written, parsed.warnings, ref.branch, { ctx, type, id: created.id });
    this.deps.log.info(`created ${type.object_type} ${created.id} in branch ${ref.branch}`);
    // Once saved, the document is the object's own (its name, not "New …"): opened in its place.
    setTimeout(async () => {
      await this.replaceTab(uri, ctx, type, created);
      void vscode.window.showInformationMessage(`${created.display} is created in branch ${ctx.branch.name}.`);
    }, 0);
  }

  /** Opens an object's own document in place of `uri`'s (a new object's, or one named by an old name). */
  private async replaceTab(
    uri: vscode.Uri,
    ctx: BranchContext,
    type: BranchObjectTypeAccess,
    object: ApiObject,
  ): Promise<void> {
    try {
      const target = await this.documentFor(ctx, type, object);
      if (target.toString() === uri.toString()) return;
      await vscode.window.showTextDocument(target, { preview: false });
      const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
      const old = tabs.find((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString());
      if (old && !old.isDirty) await vscode.window.tabGroups.close(old);
    } catch (e) {
      this.deps.log.warn(`opening ${object.display}: ${(e as Error).message}`);
    }
  }

  /**
   * The document of an object of the branch: by its name when no other object of the type
   * shares it (one lookup), else with its id beside its name.
   */
  async documentFor(
    ctx: BranchContext,
    type: BranchObjectTypeAccess,
    object: { id: number; name?: unknown },
  ): Promise<vscode.Uri> {
    let shared = true;
    if (typeof object.name === 'string' && object.name) {
      const objects = await this.objectsClient();
      shared = (await objects.listObjects(ctx, type, { name: object.name, limit: 2 })).count !== 1;
    }
    const uri = branchUri(objectDocument(ctx.branch.name, type.object_type, objectFileName(object, shared)));
    this.remember(uri, object.id);
    return uri;
  }

  // ------------------------------------------------------------------ deleting, and telling VS Code

  /** Deletes a document's object in the branch (the Explorer's Delete, and Delete Object once confirmed). */
  async delete(uri: vscode.Uri): Promise<void> {
    const ref = branchRefOf(uri);
    if (ref?.kind !== 'object' || ref.version !== 'branch')
      throw vscode.FileSystemError.NoPermissions('Only an object of a branch can be deleted here.');
    const resolved = await this.resolve(uri, ref);
    if (!resolved.ctx.access.write || !resolved.type.delete)
      throw vscode.FileSystemError.NoPermissions(
        resolved.ctx.access.reason ?? `You may not delete ${resolved.type.display} objects.`,
      );
    const objects = await this.objectsClient();
    try {
      await objects.deleteObject(resolved.ctx, resolved.type, resolved.id);
    } catch (e) {
      throw this.unavailable(`Deleting ${uri.path.split('/').pop()}`, e);
    }
    this.forgetDocument(uri);
    this.changedFiles.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
    this.wrote.fire({ branch: ref.branch, objectType: ref.objectType });
  }

  private forgetDocument(uri: vscode.Uri): void {
    const key = uri.toString();
    this.bases.delete(key);
    this.clock.forget(key);
    this.diagnostics.delete(uri);
  }

  /** Tells VS Code that the open documents of a branch (every branch: undefined) may have changed: unedited ones are read again. */
  refreshOpen(branch?: string): void {
    const events: vscode.FileChangeEvent[] = [];
    for (const doc of vscode.workspace.textDocuments) {
      const ref = branchRefOf(doc.uri);
      if (!ref || ref.kind === 'root' || (branch !== undefined && ref.branch !== branch)) continue;
      events.push({ type: vscode.FileChangeType.Changed, uri: doc.uri });
    }
    if (events.length) this.changedFiles.fire(events);
  }

  /** A document's object changed here (reverted): VS Code reads it again, or learns it is gone. */
  objectMoved(uri: vscode.Uri, gone: boolean, branch: string, objectType: string): void {
    if (gone) this.forgetDocument(uri);
    this.changedFiles.fire([{ type: gone ? vscode.FileChangeType.Deleted : vscode.FileChangeType.Changed, uri }]);
    this.wrote.fire({ branch, objectType });
  }

  /** The object a branch document shows (for commands on the active editor or a tree row). */
  async objectOf(uri: vscode.Uri): Promise<{ resolved: Resolved; branch: string } | null> {
    const ref = branchRefOf(uri);
    if (ref?.kind === 'new') {
      const pending = this.fresh.get(ref.key);
      if (!pending?.createdId) return null;
      const ctx = await this.requireContext(ref.branch);
      return { resolved: { ctx, type: this.typeOf(ctx, ref.objectType), id: pending.createdId }, branch: ref.branch };
    }
    if (ref?.kind !== 'object') return null;
    return { resolved: await this.resolve(uri, ref), branch: ref.branch };
  }
}
