#!/usr/bin/env bash
# The action's exit code: chaosrun run's (a breach is 1, unless
# FAIL_ON_BREACH=false), else 1 for a regression (chaosrun diff exited 1)
# when FAIL_ON_REGRESSION=true. diff's 2 and 3 are no comparison, not a
# failure.
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
case "$diff" in
  "" | 0) ;;
  1)
    if [ "${FAIL_ON_REGRESSION:-true}" = "true" ]; then exit 1; fi
    echo "a regression, not failing (fail-on-regression: false)"
    ;;
  *) echo "no comparison with the baseline (chaosrun diff exited $diff), not a failure" ;;
esac
exit 0
