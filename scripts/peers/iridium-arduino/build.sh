#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Iridium SBD peer harness (main.cpp + the Arduino stand-in in shim/) against a
# checkout of an Arduino IridiumSBD library, and runs it. See README.md.
#
#   build.sh LIBRARY_DIR                  start the simulator three times (scenarios main, sky,
#                                         nosignal) on temporary ptys, run the harness against
#                                         each, cross-check the MO messages the simulator logged
#   build.sh LIBRARY_DIR PTY [INBOX_DIR]  run scenario main against a simulator already running
#                                         on PTY (started with --inbox INBOX_DIR for the MT part)
#
# LIBRARY_DIR is a checkout of github.com/mikalhart/IridiumSBD or
# github.com/sparkfun/SparkFun_IridiumSBD_I2C_Arduino_Library (it must hold src/IridiumSBD.cpp).
# It is only read. The build goes to $BUILD_DIR (default: a new folder under /tmp).
# Exit status: 0 when every check passed, 1 when one failed, 2 on a setup error.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
node="$root/node_modules/.bin/node"

if [[ $# -lt 1 || $# -gt 3 ]]; then
  sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
lib=$(cd "$1" && pwd)
if [[ ! -f "$lib/src/IridiumSBD.cpp" || ! -f "$lib/src/IridiumSBD.h" ]]; then
  echo "build.sh: $lib has no src/IridiumSBD.cpp and src/IridiumSBD.h" >&2
  exit 2
fi
command -v g++ >/dev/null || { echo "build.sh: g++ is needed" >&2; exit 2; }

build=${BUILD_DIR:-$(mktemp -d /tmp/iridium-peer-build.XXXXXX)}
mkdir -p "$build"
bin="$build/iridium-peer"

# Which library, exactly.
version=$(sed -n 's/^version=//p' "$lib/library.properties" 2>/dev/null || true)
commit=$(git -C "$lib" rev-parse HEAD 2>/dev/null || echo "not a git checkout")
describe=$(git -C "$lib" describe --tags --always 2>/dev/null || echo "-")
echo "library: $lib"
echo "library: version ${version:-?} ($describe), commit $commit"

# Our files with warnings on; the library's own file as it is (it writes through the const
# char * it is given, which g++ only accepts with -fpermissive), warnings off.
cxx=(g++ -std=gnu++17 -O1 -g -DARDUINO=100 -I"$here/shim" -I"$lib/src")
"${cxx[@]}" -Wall -Wextra -c "$here/shim/arduino_shim.cpp" -o "$build/arduino_shim.o"
"${cxx[@]}" -Wall -Wextra -c "$here/main.cpp" -o "$build/main.o"
"${cxx[@]}" -fpermissive -w -c "$lib/src/IridiumSBD.cpp" -o "$build/IridiumSBD.o"
g++ -o "$bin" "$build/main.o" "$build/IridiumSBD.o" "$build/arduino_shim.o"
echo "built: $bin"

# A simulator already running: scenario main only.
if [[ $# -ge 2 ]]; then
  args=(--port "$2" --scenario main --transcript "$build/main.transcript")
  [[ $# -eq 3 ]] && args+=(--inbox "$3")
  set +e
  "$bin" "${args[@]}"
  status=$?
  set -e
  echo "transcript: $build/main.transcript"
  exit $status
fi

# Otherwise: one fresh simulator per scenario, each stopped (by its own pid) afterwards.
[[ -x "$node" ]] || { echo "build.sh: $node not found (npm install in $root)" >&2; exit 2; }
sim_pid=""
stop_sim() {
  if [[ -n "$sim_pid" ]] && kill -0 "$sim_pid" 2>/dev/null; then
    kill -INT "$sim_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$sim_pid" 2>/dev/null || break; sleep 0.1; done
    kill -TERM "$sim_pid" 2>/dev/null || true
    wait "$sim_pid" 2>/dev/null || true
  fi
  sim_pid=""
}
trap stop_sim EXIT

failed=0
run_scenario() {
  local scenario=$1; shift
  local pty="$build/$scenario.pty" inbox="$build/$scenario.inbox" log="$build/$scenario.sim.log"
  local out="$build/$scenario.peer.log"
  rm -rf "$inbox"; mkdir -p "$inbox"
  echo
  echo "=== scenario $scenario: simulator $* ==="
  (cd "$root" && exec "$node" src/main.ts sim iridium --pty "$pty" --session-ms 500 --verbose --inbox "$inbox" "$@") >"$log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 100); do grep -q 'listening on' "$log" 2>/dev/null && break; sleep 0.1; done
  if ! grep -q 'listening on' "$log"; then
    echo "build.sh: the simulator did not start:" >&2; cat "$log" >&2; stop_sim; exit 2
  fi
  grep 'listening on' "$log"
  set +e
  "$bin" --port "$pty" --inbox "$inbox" --scenario "$scenario" --transcript "$build/$scenario.transcript" | tee "$out"
  local status=${PIPESTATUS[0]}
  set -e
  sleep 0.3
  stop_sim
  [[ $status -eq 0 ]] || failed=1
  [[ $status -le 1 ]] || { echo "build.sh: the harness could not run (status $status)" >&2; exit 2; }

  # The simulator's side: every MO message the harness expects was logged, with its length and
  # first bytes, and nothing else arrived.
  local expected got
  # EXPECT-MO-AGAIN: the same bytes sent again by a session that found them still in the MO buffer.
  expected=$(grep -c '^EXPECT-MO' "$out" || true)
  got=$(grep -c ': MO message MOMSN ' "$log" || true)
  while read -r kind len preview; do
    local what="received, $len bytes: $preview"
    [[ $kind == EXPECT-MO-AGAIN ]] && what="received again (the MO buffer was not cleared with AT+SBDD0), $len bytes: $preview"
    if grep -qF "$what" "$log"; then
      echo "SIM   ok   simulator logged MO: ${what}"
    else
      echo "SIM   FAIL simulator did not log MO: ${what}"; failed=1
    fi
  done < <(grep '^EXPECT-MO' "$out")
  if [[ "$expected" == "$got" ]]; then
    echo "SIM   ok   $got MO message(s) logged, as many as sent"
  else
    echo "SIM   FAIL $got MO message(s) logged, $expected expected"; failed=1
  fi
  grep -E 'unknown command|refused' "$log" | sed 's/^/SIM   note /' || true
  echo "logs: $log, $out, $build/$scenario.transcript"
}

run_scenario main
run_scenario sky --sky 32,0,12
run_scenario nosignal --bars 0
echo
[[ $failed -eq 0 ]] && echo "all checks passed" || echo "some checks FAILED (see above)"
exit $failed
