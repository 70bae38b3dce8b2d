// The connection is always the true one and heals by itself: the scenario's service (the seeded
// world) is stopped and started again while bob is connected, while the window reloads, and the
// bundled service fails to start and then is killed. Within 5 s of the service going away every
// view and the status bar say "offline, reconnecting…" and the review page refuses to post, with
// the reason; within 5 s of its return what is shown is back, with no Refresh. The failure
// views' buttons (Retry, Show Logs, Open Settings, Use a Remote Server) show and work.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { expectText, NODE24_BIN, type VSCode } from '../harness';
import { settled } from '../fixtures/layout';
import { SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
const OFFLINE = 'Offline, reconnecting…';
/** The promise of the issue: within 5 s either way. */
const LIMIT_MS = 5_000;

const seeded = new SeededWorld();
const w = () => seeded.get();
let wrapper = '';
let failFlag = '';

/** Waits until `check` holds, at most `ms`; returns how long it took (throws with `what` otherwise). */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - t0;
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const visibleText = async (l: Locator) => ((await l.isVisible()) ? await l.innerText() : '');
const welcome = (vscode: VSCode, view: string) => vscode.view(view).locator('.welcome-view-content');
const statusBar = (vscode: VSCode) => vscode.page.locator('.part.statusbar');
const offlineEverywhere = (vscode: VSCode) => async () =>
  (await visibleText(welcome(vscode, VIEW))).includes(OFFLINE) &&
  (await visibleText(welcome(vscode, 'Checks'))).includes(OFFLINE) &&
  (await visibleText(welcome(vscode, 'My Reviews'))).includes(OFFLINE) &&
  (await statusBar(vscode).innerText()).includes('offline, reconnecting…');
const listed = (vscode: VSCode) => async () =>
  (await vscode.treeLabels(VIEW)).includes('Needs my review') &&
  /bob · /.test(await visibleText(vscode.view(VIEW).locator('.pane-header .description').first()));

async function showViews(vscode: VSCode): Promise<void> {
  await vscode.openActivity('Change Control');
  for (const v of [VIEW, 'Checks', 'My Reviews']) await vscode.expandView(v);
}

/** The pid of the bundled service this VS Code started (its database is in the run's user data). */
function bundledServicePid(vscode: VSCode): number | null {
  const db = join(vscode.userDataDir, 'User', 'globalStorage');
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmd.includes('server.js') && cmd.includes(db)) return Number(entry);
  }
  return null;
}

export const scenarios: Scenario[] = [
  {
    name: 'connection: connected, the service stops: within 5 s every view and the status bar say offline, reconnecting…, the review page refuses to post; back within 5 s of its return',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      // A Node.js that fails while a flag file exists (the bundled service's failed start); else
      // code-server's Node 24, whose node:sqlite the packaged service uses (no native module in the .vsix).
      failFlag = join(prep.tempDir, 'node-fails');
      wrapper = join(prep.tempDir, 'flaky-node.sh');
      writeFileSync(
        wrapper,
        `#!/bin/sh\nif [ -e "${failFlag}" ]; then echo "simulated failure: no Node.js here" >&2; exit 3; fi\nexec "${NODE24_BIN}" "$@"\n`,
      );
      chmodSync(wrapper, 0o755);
    },
    timeoutMs: 240_000,
    async run({ vscode, screenshot, log }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await seeded.signIn(vscode, w().reviewer.token, 'bob');
      await showViews(vscode);
      await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
      await vscode.clickTreeItem(TITLE, { view: VIEW });
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), TITLE);
      await web.locator('#decision-approve').click();
      await web.locator('#ta-review').fill('Typed while the service was there.');

      await w().svc.pause();
      const gone = await vscode.step('within 5 s: offline, reconnecting… in every view and the status bar', () =>
        within(LIMIT_MS, 'offline everywhere', offlineEverywhere(vscode)),
      );
      log(`offline shown ${gone} ms after the service stopped`);
      await vscode.step('the review page says why and refuses to post; the typed text stays', async () => {
        await expectText(web.locator('#offline-banner'), /^Offline: the Change Control service does not answer/);
        if ((await web.locator('#send-review').getAttribute('aria-disabled')) !== 'true')
          throw new Error('Submit review is not disabled');
        // Disabled for a pointer (aria-disabled): a click still reaches it, and is answered with why.
        await web.locator('#send-review').dispatchEvent('click');
        await expectText(web.locator('#ta-review-error'), /^Offline:/);
        if ((await web.locator('#ta-review').inputValue()) !== 'Typed while the service was there.')
          throw new Error('the typed review was lost');
      });
      await screenshot('offline-review-page');
      await vscode.focusWorkbench();
      await vscode.closeAllEditors();
      await vscode.clearNotifications();
      await settled(vscode);
      await screenshot('offline');

      await new Promise((r) => setTimeout(r, 3_000));
      await w().svc.resume();
      const back = await vscode.step('within 5 s of its return: connected, the lists shown again, no Refresh', () =>
        within(LIMIT_MS, 'the lists back', listed(vscode)),
      );
      log(`lists back ${back} ms after the service returned`);
      await expectText(statusBar(vscode), /\b1\b/);
    },
  },
  {
    name: 'connection: signed in, the window reloaded while the service is down: offline, then connected within 5 s of its return, with no Refresh',
    timeoutMs: 240_000,
    async run({ vscode, log }) {
      await w().svc.pause();
      await vscode.reloadWindow();
      await showViews(vscode);
      await vscode.step('offline after the reload, with its way forward', async () => {
        await within(30_000, 'offline after the reload', offlineEverywhere(vscode));
        await welcome(vscode, VIEW).locator('.monaco-button', { hasText: 'Retry' }).first().waitFor();
      });
      // Long enough for the retries to back off to their ceiling.
      await new Promise((r) => setTimeout(r, 9_000));
      await w().svc.resume();
      const back = await vscode.step('within 5 s of its return: connected and listed', () =>
        within(LIMIT_MS, 'the lists back', listed(vscode)),
      );
      log(`lists back ${back} ms after the service returned (after a reload)`);
    },
  },
  {
    name: 'connection: the offline views lead on: Show Logs, Open Settings, Use a Remote Server and Retry work',
    timeoutMs: 240_000,
    async run({ vscode, screenshot, log }) {
      await showViews(vscode);
      await w().svc.pause();
      await within(LIMIT_MS, 'offline', offlineEverywhere(vscode));
      const button = (label: string) =>
        welcome(vscode, VIEW).locator('.monaco-button', { hasText: label }).filter({ visible: true }).first();
      await screenshot('offline-welcome');

      await vscode.step('Show Logs opens the log, which says why', async () => {
        await button('Show Logs').click();
        const panel = vscode.page.locator('.part.panel');
        await expectText(panel.locator('.view-lines').first(), /connection:\s+offline/, 20_000);
      });
      await vscode.step('Open Settings opens the settings of the extension', async () => {
        await showViews(vscode);
        await button('Open Settings').click();
        await expectText(vscode.page.locator('.settings-editor').first(), /Server Url/, 20_000);
        await vscode.closeAllEditors();
      });
      await vscode.step('Use a Remote Server asks for its URL', async () => {
        await showViews(vscode);
        await button('Use a Remote Server').click();
        const state = await vscode.quickInputState();
        if (!state.open) await vscode.page.locator('.quick-input-widget').waitFor({ state: 'visible' });
        await expectText(vscode.page.locator('.quick-input-widget'), /URL of the Change Control service/);
        await vscode.page.keyboard.press('Escape');
      });
      await vscode.step('Retry while it is down: still offline; once it is back, Retry connects at once', async () => {
        await showViews(vscode);
        await button('Retry').click();
        await new Promise((r) => setTimeout(r, 1_000));
        if (!(await offlineEverywhere(vscode)())) throw new Error('not offline after Retry with the service down');
        await w().svc.resume();
        await button('Retry').click();
        const t = await within(LIMIT_MS, 'listed after Retry', listed(vscode));
        log(`Retry connected in ${t} ms`);
      });
    },
  },
  {
    name: 'connection: a failed start of the bundled service is retried by itself and heals; a bundled service that dies is started again',
    timeoutMs: 300_000,
    async run({ vscode, screenshot, log }) {
      writeFileSync(failFlag, 'fail');
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': '', 'changeControl.nodePath': wrapper });
      await showViews(vscode);
      await vscode.step('offline: the bundled service is not running; its welcome leads on', async () => {
        await expectText(welcome(vscode, VIEW), /bundled with the extension is not running/, 60_000);
        for (const label of ['Show Logs', 'Retry', 'Use a Remote Server', 'Open Settings'])
          await welcome(vscode, VIEW).locator('.monaco-button', { hasText: label }).first().waitFor();
        await expectText(statusBar(vscode), /offline, reconnecting…/);
        await vscode.expectNotification('did not answer as Node.js does', 20_000);
      });
      await screenshot('bundled-service-failed');
      await vscode.clearNotifications();

      rmSync(failFlag);
      const healed = await vscode.step('once Node.js runs, it starts and connects with no user action', () =>
        within(60_000, 'connected to the bundled service', async () =>
          /admin · bundled service/.test(await visibleText(vscode.view(VIEW).locator('.pane-header .description'))),
        ),
      );
      log(`the bundled service started and connected ${healed} ms after Node.js ran again`);

      const pid = bundledServicePid(vscode);
      if (!pid) throw new Error('no process of the bundled service found');
      process.kill(pid, 'SIGKILL');
      const down = await vscode.step('killed: offline within 5 s', () =>
        within(LIMIT_MS, 'offline after the kill', async () =>
          (await statusBar(vscode).innerText()).includes('offline, reconnecting…'),
        ),
      );
      log(`offline ${down} ms after the bundled service died`);
      const again = await vscode.step('started again by itself', () =>
        within(60_000, 'connected again', async () =>
          /admin · bundled service/.test(await visibleText(vscode.view(VIEW).locator('.pane-header .description'))),
        ),
      );
      log(`the bundled service was started again and connected in ${again} ms`);
      if (bundledServicePid(vscode) === pid) throw new Error('the same process still runs');

      // Back to the scenario's service for whatever runs next.
      await vscode.updateMachineSettings({
        'changeControl.serverUrl': w().svc.url,
        'changeControl.nodePath': '',
      });
      if (existsSync(failFlag)) rmSync(failFlag);
    },
  },
];
