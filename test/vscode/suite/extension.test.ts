// The extension inside a real VS Code: it activates, registers every command of the table and
// contributes its views; with no token it stays signed out and says so.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { COMMANDS, VIEWS } from '../../../extension/core/commands';

const EXTENSION_ID = 'change-control.change-control';

describe('Change Control in VS Code', () => {
  before(async () => {
    // A service address where nothing listens: the extension must not start the bundled one here.
    await vscode.workspace
      .getConfiguration()
      .update('changeControl.serverUrl', 'http://127.0.0.1:9', vscode.ConfigurationTarget.Global);
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
  });

  it('activates', () => {
    assert.equal(vscode.extensions.getExtension(EXTENSION_ID)!.isActive, true);
  });

  it('registers every command of the table', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const c of COMMANDS) assert.ok(registered.has(c.id), `${c.id} is not registered`);
  });

  it('contributes the views (their focus commands exist)', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const v of Object.values(VIEWS)) assert.ok(registered.has(`${v.id}.focus`), `${v.id} is not contributed`);
    await vscode.commands.executeCommand(`${VIEWS.changeRequests.id}.focus`);
  });

  it('runs Refresh and Sign Out without a service, without throwing', async () => {
    await vscode.commands.executeCommand('changeControl.refresh');
    await vscode.commands.executeCommand('changeControl.signOut');
  });
});
