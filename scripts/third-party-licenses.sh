#!/usr/bin/env bash
# Writes to stdout the licence texts of every module the chaosrun binary
# links, for linux and darwin, from the Go module cache: what a binary
# release carries as THIRD_PARTY_LICENSES besides LICENSE and NOTICE.
# It fails when a module has no licence file at its root.
set -euo pipefail
cd "$(dirname "$0")/.."
list() {
  GOOS="$1" go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}} {{if .Replace}}{{.Replace.Dir}}{{else}}{{.Dir}}{{end}}{{end}}{{end}}' ./cmd/chaosrun
}
mods="$( { list linux; list darwin; } | sort -u)"
echo "Licences of the Go modules linked into the chaosrun binary"
echo "(chaosrun itself: LICENSE and NOTICE)."
missing=0
while read -r path version dir; do
  case "$path" in github.com/chaosrun/chaosrun*) continue ;; esac
  mapfile -t files < <(find "$dir" -maxdepth 1 -type f \( -iname 'licen[cs]e*' -o -iname 'copying*' -o -iname 'notice*' \) | sort)
  if [ ${#files[@]} -eq 0 ]; then
    echo "third-party-licenses: $path $version has no licence file in $dir" >&2
    missing=1
    continue
  fi
  for f in "${files[@]}"; do
    printf '\n================================================================\n%s %s: %s\n\n' "$path" "$version" "$(basename "$f")"
    cat "$f"
  done
done <<<"$mods"
exit "$missing"
