#!/usr/bin/env bash
# Creates or updates one pull-request comment: the verdict, the Markdown
# summary of the run, the JUnit totals and the comparison with the
# baseline. The comment is found again by a hidden marker naming the gate.
# Env: GATE (marker name), RUN_CODE, DIFF_CODE, DIFF_MD, OUT_DIR,
# GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_TOKEN, GITHUB_API_URL,
# GITHUB_SERVER_URL, GITHUB_RUN_ID, GITHUB_OUTPUT.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/action/github.sh
. "$here/github.sh"
pr=$(event_field .pull_request.number)
if [ -z "$pr" ]; then
  echo "not a pull request: no comment"
  exit 0
fi
repo=${GITHUB_REPOSITORY:?}
marker="<!-- chaosrun-gate: ${GATE:-chaosrun} -->"
out=${OUT_DIR:?}
case "${RUN_CODE:-}" in
  0) verdict="✅ all checks held" ;;
  1) verdict="❌ breach" ;;
  2) verdict="⚠️ bad scenario or flags" ;;
  *) verdict="⚠️ harness error (exit ${RUN_CODE:-none})" ;;
esac
if [ "${DIFF_CODE:-}" = "1" ]; then verdict="$verdict · 📉 regression against the baseline"; fi
case "${DIFF_CODE:-}" in
  "") compared="No baseline to compare with." ;;
  2) compared="No comparison: chaosrun diff exited 2, nothing comparable (no scenario on both sides, or no figure with samples enough). Not a failure." ;;
  3) compared="No comparison: chaosrun diff exited 3, a record could not be read, is of an incomplete run or holds no windows. Not a failure." ;;
  *) compared="" ;;
esac
body=$(
  echo "$marker"
  echo "## chaosrun ${GATE:-chaosrun}: $verdict"
  echo
  if [ -f "$out/summary.md" ]; then cat "$out/summary.md"; else find "$out" -mindepth 2 -maxdepth 2 -name summary.md -print0 | sort -z | xargs -0 -r cat; fi
  echo
  "$here/junit-summary.sh" "$out" | head -n 1
  echo
  echo "### Compared with the baseline"
  if [ -n "$compared" ]; then echo "$compared"; fi
  if [ -n "${DIFF_MD:-}" ] && [ -f "$DIFF_MD" ]; then cat "$DIFF_MD"; elif [ -z "$compared" ]; then echo "No comparison written."; fi
  echo
  echo "<sub>[workflow run](${GITHUB_SERVER_URL:-https://github.com}/$repo/actions/runs/${GITHUB_RUN_ID:-0}): reports in its artifacts</sub>"
)
# GitHub takes at most 65536 characters.
if [ "${#body}" -gt 60000 ]; then body="${body:0:60000}"$'\n\n… (cut: the job summary has everything)'; fi
payload=$(jq -n --arg body "$body" '{body: $body}')
id=""
for page in 1 2 3 4 5 6 7 8 9 10; do
  comments=$(gh_api GET "/repos/$repo/issues/$pr/comments?per_page=100&page=$page")
  id=$(jq -r --arg m "$marker" '[.[] | select(.body | contains($m))] | first | .id // empty' <<< "$comments")
  if [ -n "$id" ] || [ "$(jq length <<< "$comments")" -lt 100 ]; then break; fi
done
if [ -n "$id" ]; then
  gh_api PATCH "/repos/$repo/issues/comments/$id" "$payload" > /dev/null
  echo "updated comment $id on #$pr"
else
  id=$(gh_api POST "/repos/$repo/issues/$pr/comments" "$payload" | jq -r .id)
  echo "created comment $id on #$pr"
fi
echo "comment-id=$id" >> "${GITHUB_OUTPUT:?}"
