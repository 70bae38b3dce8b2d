#!/usr/bin/env bash
# End-to-end suite: the extension in a real VS Code (code-server) in Chromium.
#   bash test/e2e/run.sh [scenario-name-filter ...]
# Installs the tools when missing (test/e2e/install-tools.sh; fast when they are there), then runs
# test/e2e/scenarios/*.ts and ends with a plain "N passed, N failed" line; exits non-zero on
# any failure. Screenshots and logs: test-artifacts/e2e/.
# Environment: CC_E2E_TOOLS (tools folder), CC_E2E_KEEP=1 (keep temp folders),
#              CC_E2E_SKIP_INSTALL=1 (do not run install-tools.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."

t0=$(date +%s)
if [ "${CC_E2E_SKIP_INSTALL:-}" != "1" ]; then
  if ! bash test/e2e/install-tools.sh; then
    echo "[e2e] installing the end-to-end tools failed"
    echo "0 passed, 1 failed"
    exit 1
  fi
fi
t1=$(date +%s)
echo "[e2e] tools ready in $((t1 - t0)) s"

npx --no-install tsx test/e2e/run.ts "$@"
rc=$?
echo "[e2e] suite finished in $(( $(date +%s) - t1 )) s (exit $rc)"
exit $rc
