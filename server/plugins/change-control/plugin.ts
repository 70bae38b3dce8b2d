import type { HostPlugin } from '../../host';
import { userDeletionGuard } from './user-records';
import { autoMergeSweeper, queueAutoMerge, recoverInterruptedJobs } from './gate/auto-merge';
import { afterRefresh } from './change-requests/refresh';
import { registerChangeRequestRoutes } from './change-requests/routes';
import { registerBuiltins } from './checks/builtins';
import { loadCheckPlugins } from './checks/plugin-loader';
import { registerReportCheckAction } from './checks/report-check-action';
import { registerCheckRoutes } from './checks/routes';
import { registerCheckTriggers } from './checks/triggers';
import { gateClockTask } from './gate/gate-clock';
import { registerCommentRoutes } from './comments/routes';
import { registerSuggestionRoutes } from './comments/suggestion-routes';
import { registerJournalRoutes } from './journal/routes';
import { changeControlMigrations } from './db/migrations';
import { registerBranchHooks } from './branch-hooks';
import { registerLifecycleEventTypes } from './change-requests/lifecycle-events';
import { APP_LABEL, MODELS, PLUGIN_NAME, PLUGIN_VERSION } from './names';
import { registerPolicyRoutes } from './policies/routes';
import { policyMatchesKeeper } from './policies/kept-matches';
import { registerFreezeRoutes } from './freezes/routes';
import { registerMergeQueueRoute } from './gate/queue-routes';
import { protectMainGuard, protectScopeProblems } from './gate/protect-main';
import { registerReviewRoutes } from './reviews/routes';
import { runtime } from './runtime';
import { searchChangeControl } from './search';
import { registerRelatedVisibility } from './related-visibility';
import { registerSettingsRoute } from './settings';
import { registerPreviewRoute } from './preview/routes';
import { registerStreamAnnouncements } from './stream/announce';
import { registerStreamRoutes } from './stream/routes';

export interface ChangeControlOptions {
  /** Where relative `check_plugins` paths are resolved from (the configuration file's folder). */
  configDir: string;
}

/**
 * The change-control plugin: version 0.5.0, runs on host 4.7 and requires branching 1.2.
 * It brings its tables, object types, routes, lifecycle events, the `report_check` event
 * action, branch hooks, the merge gate, `protect_main`, search, the check registry (built-ins
 * and in-process check plugins), automatic merge and the event stream.
 */
export function changeControlPlugin(options: ChangeControlOptions): HostPlugin {
  return {
    name: PLUGIN_NAME,
    version: PLUGIN_VERSION,
    hostVersion: { min: '4.7.0', max: '4.7.99' },
    requires: { branching: '1.2' },
    migrations: changeControlMigrations,
    async register(host) {
      for (const def of Object.values(MODELS))
        host.objectTypes.register({ appLabel: APP_LABEL, model: def.model, display: def.display });
      // No rows of its own: the object type of `override_gate`, whose constraints read the change request.
      host.objectTypes.register({ appLabel: APP_LABEL, model: 'gate', display: 'Merge gate' });
      registerLifecycleEventTypes(host);
      registerReportCheckAction(host);

      const { registry } = runtime(host);
      registerBuiltins(registry, host.config, host.log, host.objectTypes);
      await loadCheckPlugins(host.config.check_plugins, options.configDir, registry);
      // Checks register at start only.
      registry.seal();

      registerPolicyRoutes(host);
      host.branchState.register(policyMatchesKeeper());
      registerFreezeRoutes(host);
      registerMergeQueueRoute(host);
      registerChangeRequestRoutes(host);
      registerReviewRoutes(host);
      registerCommentRoutes(host);
      registerSuggestionRoutes(host);
      registerJournalRoutes(host);
      registerCheckRoutes(host);
      registerCheckTriggers(host);
      registerSettingsRoute(host);
      registerPreviewRoute(host);
      registerStreamRoutes(host);
      registerStreamAnnouncements(host);
      registerBranchHooks(host);
      host.mainWriteGuards.push(protectMainGuard);
      host.userDeletionGuards.push(userDeletionGuard);
      for (const problem of protectScopeProblems(host)) host.log.warn(`protect_main_scope: ${problem}`);
      host.search.register(searchChangeControl);
      registerRelatedVisibility(host);

      afterRefresh(host).push(queueAutoMerge);
      await recoverInterruptedJobs(host);
      host.background.push(autoMergeSweeper(host));
      host.background.push(gateClockTask(host));
    },
  };
}
