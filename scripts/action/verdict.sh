#!/usr/bin/env bash
# The action's exit code: chaosrun run's (a breach is 1, unless
# FAIL_ON_BREACH=false), else chaosrun diff's when FAIL_ON_REGRESSION=true.
# Env: RUN_CODE, DIFF_CODE, FAIL_ON_BREACH, FAIL_ON_REGRESSION.
set -euo pipefail
run=${RUN_CODE:-3}
diff=${DIFF_CODE:-}
echo "chaosrun run exited $run; chaosrun diff exited ${diff:-skipped}"
if [ "$run" = "1" ] && [ "${FAIL_ON_BREACH:-true}" != "true" ]; then
  echo "a breach, not failing (fail-on-breach: false)"
  run=0
fi
if [ "$run" != "0" ]; then exit "$run"; fi
if [ "${FAIL_ON_REGRESSION:-true}" = "true" ] && [ -n "$diff" ] && [ "$diff" != "0" ]; then exit "$diff"; fi
exit 0
