#!/usr/bin/env bash
# Compares the run records with the baseline's (chaosrun diff), adds the
# Markdown to the job summary and outputs code (0 no regression, 1 a
# significant regression, 2 nothing comparable, 3 a record unreadable,
# incomplete or without windows: 2 and 3 are no comparison, said in the
# summary, not a failure), compared (true for 0 and 1) and markdown (the
# file, when diff wrote one).
# Env: BASELINE_DIR, OUT_DIR, CHAOSRUN, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY,
# RUNNER_TEMP.
set -euo pipefail
md="${RUNNER_TEMP:?}/chaosrun-diff.md"
json="${RUNNER_TEMP}/chaosrun-diff.json"
set +e
"${CHAOSRUN:-chaosrun}" diff --markdown "$md" --json "$json" "${BASELINE_DIR:?}" "${OUT_DIR:?}"
code=$?
set -e
echo "code=$code" >> "${GITHUB_OUTPUT:?}"
case "$code" in
  0 | 1) echo "compared=true" >> "$GITHUB_OUTPUT" ;;
  *)
    echo "compared=false" >> "$GITHUB_OUTPUT"
    case "$code" in
      2) why="nothing comparable (no scenario on both sides, or no figure with samples enough)" ;;
      3) why="a record could not be read, is of an incomplete run or holds no windows (a baseline from a failed run?)" ;;
      *) why="chaosrun diff failed" ;;
    esac
    echo "No comparison with the baseline: chaosrun diff exited $code: $why. Not a failure." >> "${GITHUB_STEP_SUMMARY:?}"
    ;;
esac
if [ -f "$md" ]; then
  echo "markdown=$md" >> "$GITHUB_OUTPUT"
  cat "$md" >> "${GITHUB_STEP_SUMMARY:?}"
fi
echo "chaosrun diff exited $code"
