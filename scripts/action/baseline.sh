#!/usr/bin/env bash
# Finds the newest unexpired artifact NAME uploaded by a workflow run on the
# baseline branch (default: the repository's default branch) and outputs
# found=true and run-id (the run that uploaded it), else found=false. The
# action uploads a baseline only for a run that exited 0 or 1; one that is
# not comparable anyway (an older incomplete one) makes chaosrun diff exit
# 3, which the action reports as no comparison.
# Env: ARTIFACT, BRANCH, GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_TOKEN,
# GITHUB_API_URL, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY.
set -euo pipefail
# shellcheck source=scripts/action/github.sh
. "$(dirname "$0")/github.sh"
branch=${BRANCH:-$(event_field .repository.default_branch)}
branch=${branch:-main}
name=${ARTIFACT:?}
list=$(gh_api GET "/repos/${GITHUB_REPOSITORY:?}/actions/artifacts?name=$(jq -rn --arg v "$name" '$v|@uri')&per_page=100")
run_id=$(jq -r --arg b "$branch" '[.artifacts[] | select(.expired | not) | select(.workflow_run.head_branch == $b)] | sort_by(.created_at) | last | .workflow_run.id // empty' <<< "$list")
if [ -z "$run_id" ]; then
  echo "found=false" >> "${GITHUB_OUTPUT:?}"
  echo "No baseline artifact \`$name\` from \`$branch\` yet: nothing to compare with." >> "${GITHUB_STEP_SUMMARY:?}"
  exit 0
fi
echo "found=true" >> "${GITHUB_OUTPUT:?}"
echo "run-id=$run_id" >> "$GITHUB_OUTPUT"
echo "baseline: artifact $name of run $run_id on $branch"
