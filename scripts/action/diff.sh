#!/usr/bin/env bash
# Compares the run records with the baseline's (chaosrun diff), adds the
# Markdown to the job summary and outputs code (0 no regression, 1 a
# significant regression) and markdown (the file).
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
if [ -f "$md" ]; then
  echo "markdown=$md" >> "$GITHUB_OUTPUT"
  cat "$md" >> "${GITHUB_STEP_SUMMARY:?}"
fi
echo "chaosrun diff exited $code"
