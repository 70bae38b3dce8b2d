// The packaged Change Control extension in VS Code: it activates, says it is not connected, signs
// in with a token against a service this scenario starts (ignoring a workspace's attempt to name
// another service: the URL is machine-scoped), and starts its bundled service when
// changeControl.serverUrl is empty.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectText, type VSCode } from '../harness';
import { projectExtensionVsix } from '../fixtures/project-extension';
import type { Scenario } from '../suite';
import { startService, type TestService } from '../../support/service';

const VIEW = 'Change Requests';
let service: TestService | undefined;
let reviewerToken = '';

function serviceHost(): string {
  if (!service) throw new Error("the scenario's service is not running");
  return new URL(service.url).host;
}

/** The description VS Code shows next to a view's title (TreeView.description). */
function viewDescription(vscode: VSCode, title: string) {
  return vscode.view(title).locator('.pane-header .description').first();
}

export const scenarios: Scenario[] = [
  {
    name: 'change control: the packaged extension activates and shows the not-connected welcome',
    async prepare(prep) {
      service = await startService();
      prep.onCleanup(async () => {
        await service?.close();
        service = undefined;
      });
      const user = await service.admin.post('/api/users/users/', { username: 'reviewer', password: 'e2e-password-1' });
      if (user.status !== 201) throw new Error(`creating the reviewer: ${JSON.stringify(user.body)}`);
      const token = await service.admin.post('/api/users/tokens/', { user: user.body.id, description: 'e2e' });
      if (token.status !== 201) throw new Error(`creating the reviewer's token: ${JSON.stringify(token.body)}`);
      reviewerToken = token.body.key;
      const canView = await service.admin.post('/api/users/permissions/', {
        name: 'reviewers see change control',
        object_types: [
          'change_control.changerequest',
          'change_control.review',
          'change_control.changecomment',
          'change_control.mergecheck',
        ],
        actions: ['view'],
        users: [user.body.id],
      });
      if (canView.status !== 201)
        throw new Error(`granting the reviewer view permissions: ${JSON.stringify(canView.body)}`);

      prep.addExtension({ vsix: projectExtensionVsix(prep.tempDir) });
      // Machine-scoped settings (a workspace cannot choose where the token goes): code-server
      // reads them from the machine's settings, never from the user's or a workspace's.
      prep.machineSetting('changeControl.serverUrl', service.url);
      // A hostile folder names another service: the extension must not follow it (the sign-in
      // below lands on the scenario's service, never on this one).
      mkdirSync(join(prep.workspace, '.vscode'), { recursive: true });
      writeFileSync(
        join(prep.workspace, '.vscode', 'settings.json'),
        JSON.stringify({ 'changeControl.serverUrl': 'http://127.0.0.1:9', 'changeControl.nodePath': '/tmp/not-node' }),
      );
    },
    async run({ vscode, screenshot, log }) {
      await vscode.openActivity('Change Control');
      const welcome = vscode.view(VIEW).locator('.welcome-view-content');
      await vscode.step('not-connected welcome', async () => {
        await expectText(welcome, 'You are not connected to the Change Control service.', 60_000);
        await welcome.locator('.monaco-button', { hasText: 'Sign In' }).first().waitFor();
      });
      await vscode.step('the other views', async () => {
        await vscode.view('Checks').waitFor();
        await vscode.view('My Reviews').waitFor();
      });
      await expectText(viewDescription(vscode, VIEW), 'not signed in');
      await screenshot('not-connected');
      // The extension host's own measure of the activation (a figure for docs/performance.md,
      // printed and kept with the artifacts; not asserted).
      const activation = await vscode.extensionActivationTime('Change Control');
      log(`Change Control activation, as the extension host measured it: ${activation.text}`);
      appendFileSync(join(vscode.artifactsDir, 'activation.txt'), `${new Date().toISOString()} ${activation.text}\n`);
    },
  },
  {
    name: 'change control: Sign In with a token',
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.runCommand('Change Control: Sign In');
      await vscode.quickPick(/Sign in with a token/);
      await vscode.inputBox(reviewerToken, { expectPrompt: 'API token' });
      await vscode.expectNotification(`Signed in to ${serviceHost()} as reviewer.`, 30_000);
      await expectText(viewDescription(vscode, VIEW), `reviewer · ${serviceHost()}`);
      await vscode.step('not-connected welcome gone', async () => {
        await vscode
          .view(VIEW)
          .locator('.welcome-view-content', { hasText: 'You are not connected' })
          .waitFor({ state: 'hidden' });
      });
      await vscode.step('the view settles', () =>
        Promise.any([
          vscode
            .view(VIEW)
            .locator('.welcome-view-content', { hasText: 'There are no change requests yet.' })
            .waitFor(),
          vscode.treeItem('Needs my review', { view: VIEW }).waitFor(),
          vscode.treeItem('Retry loading change requests', { view: VIEW }).waitFor(),
        ]),
      );
      await screenshot('signed-in');
      await vscode.runCommand('Change Control: Sign Out');
      await vscode.expectNotification('Signed out of Change Control.');
      await expectText(vscode.view(VIEW).locator('.welcome-view-content'), 'You are not connected');
    },
  },
  {
    name: 'change control: with no service URL the bundled service starts and signs in as admin',
    timeoutMs: 150_000,
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': '' });
      await vscode.step('bundled service up', () =>
        expectText(viewDescription(vscode, VIEW), 'admin · bundled service', 120_000),
      );
      await screenshot('bundled-service');
      await vscode.runCommand('Change Control: Show Logs');
      // The editor shows spaces as no-break spaces: \s matches both.
      const log = vscode.page.locator('.part.panel .view-lines');
      // changeControl.nodePath is not set: the service runs on the editor's own runtime (code-server's
      // Node 24) with Node's SQLite, from a package that holds no native module.
      await vscode.step("log names the editor's runtime and node:sqlite", async () => {
        await expectText(log, /starting\s+the\s+bundled\s+service\s+on\s+the\s+editor's\s+runtime\s+"[^"]+"/, 30_000);
        await expectText(log, /SQLite\s+driver:\s+node:sqlite\s+\(CHANGE_CONTROL_SQLITE_DRIVER=node\)/);
      });
      await vscode.step('log names its address', () =>
        expectText(log, /the\s+bundled\s+service\s+listens\s+on\s+http:\/\/127\.0\.0\.1:\d+/),
      );
      await screenshot('log');
    },
  },
];
