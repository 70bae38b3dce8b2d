// Proves the harness on throwaway extensions generated at test time (see fixtures/).
import { assertEqual, expectText } from '../harness';
import { buildSmokeVsix, writeFolderExtension } from '../fixtures/smoke-extension';
import type { Scenario } from '../suite';

const TOKEN = 'tok-1234';

const prepareSmoke: Scenario['prepare'] = (prep) => {
  prep.addExtension({ vsix: buildSmokeVsix(prep.tempDir) });
  prep.setting('e2eSmoke.greeting', 'Greetings');
  prep.env('CC_E2E_SMOKE_TOKEN', TOKEN);
};

export const scenarios: Scenario[] = [
  {
    name: 'smoke: palette command shows a notification (vsix, user setting, env)',
    prepare: prepareSmoke,
    async run({ vscode, screenshot }) {
      await vscode.runCommand('E2E Smoke: Say Hello');
      await vscode.expectNotification(`Greetings from E2E Smoke (token ${TOKEN})`);
      await screenshot('notification');
    },
  },
  {
    name: 'smoke: webview button talks to the extension host',
    async run({ vscode, screenshot }) {
      await vscode.runCommand('E2E Smoke: Say Hello');
      await vscode.clickNotificationButton('from E2E Smoke', 'Open Panel');
      const web = await vscode.webview({ has: '#smoke-button' });
      await expectText(web.locator('#smoke-heading'), 'E2E Smoke Panel');
      await vscode.tab('E2E Smoke Panel').waitFor();
      await web.locator('#smoke-button').click();
      await expectText(web.locator('#smoke-status'), 'Host acknowledged 1 press(es)');
      await vscode.expectNotification('Webview button pressed 1 time(s)');
      await web.locator('#smoke-button').click();
      await expectText(web.locator('#smoke-status'), 'Host acknowledged 2 press(es)');
      await screenshot('webview');
    },
  },
  {
    name: 'smoke: tree view items are listed and clickable',
    async run({ vscode, screenshot }) {
      await vscode.openActivity('E2E Smoke');
      await vscode.treeItem('Alpha', { view: 'Smoke Items' }).waitFor();
      assertEqual(await vscode.treeLabels('Smoke Items'), ['Alpha', 'Beta', 'Gamma'], 'tree labels');
      await vscode.clickTreeItem('Beta', { view: 'Smoke Items' });
      await vscode.expectNotification('Selected Beta');
      await vscode.clickTreeItem('Gamma', { view: 'Smoke Items' });
      await vscode.treeItem('Gamma child', { view: 'Smoke Items' }).waitFor();
      await screenshot('tree');
    },
  },
  {
    name: 'smoke: quick pick, input box with validation, modal dialog',
    async run({ vscode, screenshot }) {
      await vscode.runCommand('E2E Smoke: Order Fruit');
      await vscode.quickPick('Pears');
      await expectText(vscode.page.locator('.quick-input-widget .quick-input-message'), 'How many Pears?');
      const input = vscode.page.locator('.quick-input-widget .quick-input-box input');
      await input.fill('many');
      await expectText(vscode.page.locator('.quick-input-widget .quick-input-message'), 'A whole number, please');
      await screenshot('input-validation');
      await vscode.inputBox('3');
      await vscode.expectDialog('Order 3 Pears?');
      await screenshot('dialog');
      await vscode.dialogButton('Order');
      await vscode.expectNotification('Ordered 3 Pears');
      // Cancelling the dialog is reported too.
      await vscode.runCommand('E2E Smoke: Order Fruit');
      await vscode.quickPick('Plums', { filter: 'plu' });
      await vscode.inputBox('1');
      await vscode.expectDialog('Order 1 Plums?');
      await vscode.dialogButton('Cancel');
      await vscode.expectNotification('Order cancelled');
    },
  },
  {
    name: 'smoke: a QuickPick that closes unanswered is asked for again (its command runs again), and one that opens late is waited for',
    async run({ vscode }) {
      // The first run's QuickPick closes by itself; the second run's opens three seconds late.
      await vscode.runCommand('E2E Smoke: Pick Late');
      await vscode.quickPick('Lime');
      await vscode.inputBox('2', { expectPrompt: 'How many Lime?' });
      await vscode.expectNotification('Picked 2 Lime on run 2');
    },
  },
  {
    name: 'smoke: a notification that left its toast for the notification centre is found there, its button pressed',
    async run({ vscode }) {
      await vscode.runCommand('E2E Smoke: Say Hello');
      await vscode.expectNotification('from E2E Smoke');
      // Where VS Code moves a toast after about ten seconds: showing the centre does it at once.
      await vscode.runCommand('Notifications: Show Notifications');
      await vscode.runCommand('Notifications: Hide Notifications');
      assertEqual(await vscode.notification('from E2E Smoke').count(), 0, 'toasts with the greeting');
      await vscode.expectNotification('from E2E Smoke', 1_000);
      await vscode.clickNotificationButton('from E2E Smoke', 'Open Panel', 1_000);
      await vscode.tab('E2E Smoke Panel').waitFor();
    },
  },
  {
    name: 'smoke: unpacked extension folder',
    prepare(prep) {
      prep.addExtension({ folder: writeFolderExtension(prep.tempDir) });
    },
    async run({ vscode }) {
      await vscode.runCommand('E2E Folder: Ping');
      await vscode.expectNotification('Pong from the unpacked extension');
    },
  },
];
