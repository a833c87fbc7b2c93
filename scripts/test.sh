#!/usr/bin/env bash
# The whole test suite on a fresh machine: system services, npm dependencies, then every test,
# twice: at the real date, and again with the system clock a year ahead (Debian's faketime
# around the runner; timers and the monotonic clock stay real), so that no test depends on
# the date it runs (issue 30). Ends with the line "N passed, N failed" of both runs together.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-services.sh
npm ci --no-audit --no-fund --loglevel=error

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
npm test "$@" 2>&1 | tee "$out/now" || status=1
echo "== the same suite with the system clock ${TEST_CLOCK_AHEAD:-365d} ahead =="
FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f "+${TEST_CLOCK_AHEAD:-365d}" npm test "$@" 2>&1 | tee "$out/ahead" || status=1

summary() { grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$1" | tail -1; }
read -r p1 _ f1 _ <<<"$(summary "$out/now" || echo '0 passed, 1 failed')"
read -r p2 _ f2 _ <<<"$(summary "$out/ahead" || echo '0 passed, 1 failed')"
echo "at the real date: $(summary "$out/now" || echo 'no summary'); a year ahead: $(summary "$out/ahead" || echo 'no summary')"
echo "$((p1 + p2)) passed, $((f1 + f2)) failed"
exit $status
