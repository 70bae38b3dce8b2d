// The commands of authoring in the editor (a branch's objects as documents: show them, open the
// branch as a workspace folder, go to an object, create, delete, revert one to main) and of
// suggested changes (suggest one in a thread, apply one or all), as part of the handler map that
// extension/vscode/commands.ts registers.
import * as vscode from 'vscode';
import type { Branch, BranchObjectTypeAccess } from '../../contract/api/branching';
import type { ApiClient } from '../core/api-client';
import { branchFolder } from '../core/branch-documents';
import type { BranchContext } from '../core/branch-objects-client';
import { applicableSuggestions } from '../core/suggestions';
import { branchPicks } from '../core/pick-items';
import { branchRefOf, branchUri, type BranchDocuments } from './branch-documents';
import type { BranchObjectsNode, BranchObjectsView } from './branch-objects-view';
import { ReviewComment, type ReviewComments } from './comments';
import type { ErrorReporter } from './errors';
import type { ReviewCommandDeps } from './review-commands';

type Handler = (...args: unknown[]) => unknown;

/** The branch's documents and views, and the commands' shared helpers (as the review commands get them). */
export interface AuthoringCommandDeps extends Pick<
  ReviewCommandDeps,
  'reporter' | 'log' | 'client' | 'target' | 'inView' | 'afterChange'
> {
  documents: BranchDocuments;
  branchObjects: BranchObjectsView;
  comments: ReviewComments;
}

function isCommentReply(arg: unknown): arg is vscode.CommentReply {
  return !!arg && typeof arg === 'object' && 'thread' in arg && 'text' in arg;
}

/** The document a command is about: a tree row's, an Explorer item's, or the active editor's. */
function documentArg(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return branchRefOf(arg) ? arg : undefined;
  const node = arg as { kind?: string; row?: { address?: { path: string; query: string } } } | undefined;
  if (node?.kind === 'row' && node.row?.address) return branchUri(node.row.address);
  const active = vscode.window.activeTextEditor?.document.uri;
  return active && branchRefOf(active) ? active : undefined;
}

const fileName = (uri: vscode.Uri) => uri.path.split('/').pop() ?? uri.path;

/** A failure the documents already said in words (file system errors), or one of the service's. */
function sayFailure(what: string, e: unknown, reporter?: ErrorReporter): void {
  if (e instanceof vscode.FileSystemError) void vscode.window.showWarningMessage(e.message);
  else reporter?.report(what, e);
}

export function authoringHandlers(deps: AuthoringCommandDeps) {
  const { documents, branchObjects, comments, reporter } = deps;

  /** A ready branch: the one given, the Branch Objects view's, or one picked. */
  async function pickBranch(c: ApiClient, placeHolder: string, preferShown = true): Promise<string | undefined> {
    if (preferShown && branchObjects.branch) return branchObjects.branch;
    const [branches, requests] = await deps.inView(() =>
      Promise.all([c.listBranches({ status: 'ready' }), c.listChangeRequests()]),
    );
    if (branches.length === 0) {
      void vscode.window.showInformationMessage('There are no open branches: run Create Branch first.');
      return undefined;
    }
    const chosen = await vscode.window.showQuickPick(branchPicks(branches, requests), {
      placeHolder,
      matchOnDetail: true,
    });
    return chosen?.value.name;
  }

  async function contextOf(branch: string): Promise<BranchContext | undefined> {
    const ctx = await documents.context(branch);
    if (!ctx) void vscode.window.showWarningMessage(`There is no branch "${branch}" (or you may not see it).`);
    return ctx ?? undefined;
  }

  /** Objects of every type matching `q` (their names), a few per type, as QuickPick rows. */
  async function findObjects(ctx: BranchContext, q: string) {
    const objects = await documents.objectsClient();
    const types = ctx.access.object_types.filter((t) => t.view);
    const pages = await Promise.all(
      types.map(async (type) => {
        try {
          const page = await objects.listObjects(ctx, type, { q: q || undefined, ordering: 'name', limit: 10 });
          return page.results.map((o) => ({
            label: o.display,
            description: `${type.display} · ${type.object_type}`,
            detail:
              page.count > 10 && o === page.results[9]
                ? `${page.count - 10} more ${type.display} objects match`
                : undefined,
            object: o,
            type,
          }));
        } catch {
          return [];
        }
      }),
    );
    return pages.flat();
  }

  const handlers = {
    'changeControl.showBranchObjects': async (branchArg: unknown) => {
      const c = deps.client();
      if (!c) return;
      const branch =
        typeof branchArg === 'string'
          ? branchArg
          : ((branchArg as Branch | undefined)?.name ?? (await pickBranch(c, 'Branch whose objects to show', false)));
      if (branch) await branchObjects.show(branch);
    },

    'changeControl.openBranchFolder': async () => {
      const c = deps.client();
      if (!c) return;
      const branch = await pickBranch(c, 'Branch to open as a workspace folder', false);
      if (!branch) return;
      const uri = branchUri(branchFolder(branch));
      const folders = vscode.workspace.workspaceFolders ?? [];
      if (folders.some((f) => f.uri.toString() === uri.toString())) {
        await vscode.commands.executeCommand('workbench.view.explorer');
        return;
      }
      vscode.workspace.updateWorkspaceFolders(folders.length, 0, { uri, name: `Branch ${branch}` });
      await vscode.commands.executeCommand('workbench.view.explorer');
    },

    'changeControl.goToObject': async () => {
      const c = deps.client();
      if (!c) return;
      const branch = await pickBranch(c, 'Branch whose objects to search');
      if (!branch) return;
      const ctx = await contextOf(branch);
      if (!ctx) return;
      type Row = Awaited<ReturnType<typeof findObjects>>[number] & vscode.QuickPickItem;
      const qp = vscode.window.createQuickPick<Row>();
      qp.title = `Go to an object of branch ${branch}`;
      qp.placeholder = 'Type part of a name (the service searches every object type)';
      qp.matchOnDescription = true;
      let asked = 0;
      let timer: NodeJS.Timeout | undefined;
      const search = (q: string) => {
        const n = ++asked;
        qp.busy = true;
        void findObjects(ctx, q).then((rows) => {
          if (n !== asked) return;
          qp.items = rows;
          qp.busy = false;
        });
      };
      qp.onDidChangeValue((v) => {
        clearTimeout(timer);
        timer = setTimeout(() => search(v.trim()), 250);
      });
      const picked = await new Promise<Row | undefined>((resolve) => {
        qp.onDidAccept(() => {
          resolve(qp.selectedItems[0]);
          qp.hide();
        });
        qp.onDidHide(() => resolve(undefined));
        qp.show();
        search('');
      });
      clearTimeout(timer);
      qp.dispose();
      if (!picked) return;
      const uri = await documents.documentFor(ctx, picked.type, picked.object);
      await vscode.window.showTextDocument(uri, { preview: false });
    },

    'changeControl.newObject': async (arg: unknown) => {
      const c = deps.client();
      if (!c) return;
      const branch = await pickBranch(c, 'Branch to create the object in');
      if (!branch) return;
      const ctx = await contextOf(branch);
      if (!ctx) return;
      if (!ctx.access.write) {
        void vscode.window.showWarningMessage(`You cannot create objects in ${branch}: ${ctx.access.reason}`);
        return;
      }
      const given =
        (arg as BranchObjectsNode | undefined)?.kind === 'type'
          ? (arg as { type: BranchObjectTypeAccess }).type
          : undefined;
      const addable = ctx.access.object_types.filter((t) => t.add);
      if (addable.length === 0) {
        void vscode.window.showWarningMessage('Your permissions let you create no kind of object.');
        return;
      }
      const type =
        (given && addable.find((t) => t.object_type === given.object_type)) ??
        (
          await vscode.window.showQuickPick(
            addable.map((t) => ({ label: t.display, description: t.object_type, type: t })),
            { placeHolder: `Type of the new object in ${branch}` },
          )
        )?.type;
      if (!type) return;
      const uri = documents.newObject(branch, type);
      await vscode.window.showTextDocument(uri, { preview: false });
      vscode.window.setStatusBarMessage(`Fill in the new ${type.display}, then save to create it in ${branch}.`, 8000);
    },

    'changeControl.deleteObject': async (arg: unknown) => {
      const uri = documentArg(arg);
      if (!uri) {
        void vscode.window.showInformationMessage(
          'Open an object of a branch (or select it in Branch Objects) to delete it.',
        );
        return;
      }
      const ref = branchRefOf(uri);
      if (ref?.kind !== 'object' || ref.version !== 'branch') {
        void vscode.window.showInformationMessage('Only an object the branch shows can be deleted.');
        return;
      }
      const ok = await vscode.window.showWarningMessage(
        `Delete ${fileName(uri)} in branch ${ref.branch}?`,
        {
          modal: true,
          detail:
            'The object is deleted in the branch only; main keeps it until the branch merges. Revert Object to Main undoes it.',
        },
        'Delete',
      );
      if (ok !== 'Delete') return;
      try {
        await documents.delete(uri);
        void vscode.window.showInformationMessage(`${fileName(uri)} is deleted in branch ${ref.branch}.`);
      } catch (e) {
        sayFailure(`Deleting ${fileName(uri)}`, e, reporter);
      }
    },

    'changeControl.revertObject': async (arg: unknown) => {
      const uri = documentArg(arg);
      if (!uri) {
        void vscode.window.showInformationMessage(
          'Open an object of a branch (or select it in Branch Objects) to revert it.',
        );
        return;
      }
      const ref = branchRefOf(uri);
      if (ref?.kind !== 'object' && ref?.kind !== 'new') return;
      try {
        const found = await documents.objectOf(uri.with({ query: ref.kind === 'object' ? '' : uri.query }));
        if (!found) return;
        const { resolved, branch } = found;
        const objects = await documents.objectsClient();
        const change = await objects.changeOf(resolved.ctx.branch.id, resolved.type.object_type, resolved.id);
        if (!change) {
          void vscode.window.showInformationMessage(`${fileName(uri)} is as on main: the branch does not change it.`);
          return;
        }
        const effect =
          change.action === 'create'
            ? 'It was created in the branch: it is removed from the branch.'
            : change.action === 'delete'
              ? 'It was deleted in the branch: it comes back as main has it now.'
              : "The branch's edits of it are undone: it becomes what main holds now.";
        const ok = await vscode.window.showWarningMessage(
          `Revert ${fileName(uri)} to main?`,
          { modal: true, detail: effect },
          'Revert',
        );
        if (ok !== 'Revert') return;
        const result = await objects.revert(change.id);
        const doc = branchUri({ path: uri.path, query: '' });
        documents.objectMoved(doc, result.object === null, branch, resolved.type.object_type);
        void vscode.window.showInformationMessage(`${fileName(uri)} is reverted to main in branch ${branch}.`);
      } catch (e) {
        sayFailure(`Reverting ${fileName(uri)}`, e, reporter);
      }
    },

    'changeControl.loadMoreObjects': async (node: unknown) => {
      if ((node as BranchObjectsNode | undefined)?.kind === 'more')
        await branchObjects.loadMore(node as BranchObjectsNode);
    },

    'changeControl.suggestChange': async (reply: unknown) => {
      if (isCommentReply(reply)) await comments.suggestChange(reply);
    },

    'changeControl.applySuggestion': async (comment: unknown) => {
      if (!(comment instanceof ReviewComment) || comment.view.id === null) return;
      const id = comment.view.id;
      if (await comments.applySuggestions(comment.changeRequestId, [id])) {
        documents.refreshOpen();
        void vscode.window.showInformationMessage('The suggestion is applied in the branch; its thread is resolved.');
        await deps.afterChange(comment.changeRequestId);
      }
    },

    'changeControl.applySuggestions': async (arg: unknown) => {
      const t = await deps.target(arg, 'apply_suggestions', 'Change request whose suggestions to apply');
      if (!t) return;
      const all = await deps.inView(() => t.c.listComments(t.cr.id));
      const ready = applicableSuggestions(all, true);
      const outdated = all.filter((c) => c.suggestion && !c.suggestion.applied_at && c.suggestion.outdated).length;
      if (ready.length === 0) {
        void vscode.window.showInformationMessage(
          `"${t.cr.title}" has no suggestion to apply${outdated ? ` (${outdated} outdated: apply those one by one, after a look)` : ''}.`,
        );
        return;
      }
      const ok = await vscode.window.showWarningMessage(
        `Apply ${ready.length} suggestion${ready.length === 1 ? '' : 's'} to branch ${t.cr.branch_name}?`,
        {
          modal: true,
          detail: `They are written into the branch as you, one change per object, and their threads are resolved.${outdated ? ` ${outdated} outdated suggestion${outdated === 1 ? ' is' : 's are'} left out.` : ''}`,
        },
        'Apply',
      );
      if (ok !== 'Apply') return;
      if (
        await comments.applySuggestions(
          t.cr.id,
          ready.map((c) => c.id),
        )
      ) {
        documents.refreshOpen(t.cr.branch_name);
        void vscode.window.showInformationMessage(
          `${ready.length} suggestion${ready.length === 1 ? '' : 's'} applied to ${t.cr.branch_name}.`,
        );
        await deps.afterChange(t.cr.id);
      }
    },
  } satisfies Record<string, Handler>;
  return handlers;
}
