#!/usr/bin/env bash
# Smoke test of the shipped executables (issue 3): for each architecture, the binary in dist/
# must print its arch, run the bridge on a temporary database (health, owner.key, a key that
# works), stop cleanly on SIGTERM, and pass bytes through a socat pty pair with the serialport
# native addon it carries. A foreign architecture runs under qemu-user-static (binfmt is not
# registered in containers, so qemu is called directly); missing Debian packages are
# installed when running as root.
#
#   scripts/smoke-binary.sh              both architectures
#   scripts/smoke-binary.sh arm64        one
#   DIST=/path/to/dist scripts/smoke-binary.sh
#
# Later issues add their features here: one `check` per behaviour.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dist=${DIST:-$here/dist}
archs=("$@")
[ ${#archs[@]} -eq 0 ] && archs=(x64 arm64)

work=$(mktemp -d "${TMPDIR:-/tmp}/fb-smoke-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

failures=0
arch=''
say() { printf '[smoke %s] %s\n' "$arch" "$*"; }
pass() { say "ok    $*"; }
fail() { say "FAIL  $*"; failures=$((failures + 1)); }
die() { printf '[smoke] cannot run: %s\n' "$*" >&2; exit 2; }

host_arch() { case "$(uname -m)" in x86_64) echo x64 ;; aarch64 | arm64) echo arm64 ;; *) uname -m ;; esac; }

# Debian packages to run a foreign architecture (docs/packaging.md, "Running arm64 here").
declare -A qemu_bin=([arm64]=qemu-aarch64-static [x64]=qemu-x86_64-static)
declare -A sysroot=([arm64]=/usr/aarch64-linux-gnu [x64]=/usr/x86_64-linux-gnu)
declare -A cross_pkgs=([arm64]='libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross' [x64]='libc6-amd64-cross libstdc++6-amd64-cross libgcc-s1-amd64-cross')

apt_updated=''
need_packages() { # need_packages WHY PKG...
  local why=$1
  shift
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    die "$why: install the Debian packages $* (apt-get install $*)"
  fi
  printf '[smoke] installing %s (%s)\n' "$*" "$why"
  if [ -z "$apt_updated" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; die "apt-get update failed"; }
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >>"$work/apt.log" 2>&1 ||
    { tail -20 "$work/apt.log" >&2; die "apt-get install $* failed"; }
}

command -v socat >/dev/null || need_packages 'pty pairs for the serial check' socat
command -v curl >/dev/null || need_packages 'HTTP checks' curl

# runner ARCH: the command prefix that runs a binary of ARCH on this machine.
runner() {
  local a=$1
  if [ "$a" = "$(host_arch)" ]; then return 0; fi
  local q=${qemu_bin[$a]:-}
  [ -n "$q" ] || die "no way to run $a on $(host_arch)"
  if ! command -v "$q" >/dev/null || [ ! -d "${sysroot[$a]}/lib" ]; then
    # shellcheck disable=SC2086
    need_packages "run $a binaries under emulation" qemu-user-static ${cross_pkgs[$a]}
  fi
  # -U LD_PRELOAD: a host preload (faketime in scripts/test.sh's second run) is of the host's
  # architecture and cannot load in the guest.
  echo "$q -U LD_PRELOAD -L ${sysroot[$a]}"
}

# wait_for SECONDS FILE PATTERN: until FILE holds PATTERN.
wait_for() {
  local until=$((SECONDS + $1))
  while [ $SECONDS -lt $until ]; do
    grep -q -- "$3" "$2" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

smoke() {
  arch=$1
  local bin=$dist/fieldbridge-linux-$arch
  [ -x "$bin" ] || die "$bin is missing: run npm run build first"
  local prefix
  prefix=$(runner "$arch") || exit $?
  local dir=$work/$arch
  mkdir -p "$dir"
  # The addon cache goes where systemd's CacheDirectory= puts it (CACHE_DIRECTORY), HOME stays clean.
  local -a env=(env HOME="$dir/home" CACHE_DIRECTORY="$dir/cache" SERVICE_LOG_FORMAT=json)
  local -a run=("${env[@]}")
  # shellcheck disable=SC2206
  [ -n "$prefix" ] && run+=($prefix)
  run+=("$bin")
  say "binary $bin ($(du -m "$bin" | cut -f1) MB)${prefix:+, under ${prefix%% *}}"

  # 1. version names the architecture.
  local version
  if version=$("${run[@]}" version 2>&1) && grep -qx "arch $arch" <<<"$version"; then
    pass "version: $(tr '\n' ' ' <<<"$version")"
  else
    fail "version did not print 'arch $arch': $version"
  fi

  # 2. The bridge on a temporary database. Port 0: the kernel picks a free port and the
  #    bridge_listening line carries the real URL.
  local log=$dir/bridge.log
  SERVICE_DB_PATH="$dir/data/bridge.db" SERVICE_LISTEN=127.0.0.1:0 "${run[@]}" bridge >"$log" 2>&1 &
  local bridge=$!
  pids+=("$bridge")
  if ! wait_for 60 "$log" '"bridge_listening"'; then
    fail "the bridge did not start within 60 s; its output:"
    sed 's/^/    /' "$log"
    kill "$bridge" 2>/dev/null
    return
  fi
  local url
  url=$(grep '"bridge_listening"' "$log" | sed -E 's/.*"url":"([^"]+)".*/\1/')
  pass "bridge listening at $url"

  local health
  health=$(curl -sS -m 10 -w ' %{http_code}' "$url/api/health")
  if [[ "$health" == *'"status":"ok"'*' 200' ]]; then pass "GET /api/health: $health"; else fail "GET /api/health: $health"; fi

  local keyfile=$dir/data/owner.key
  if [ -f "$keyfile" ] && [ "$(stat -c %a "$keyfile")" = 600 ]; then
    pass "owner.key written beside the database, mode 600"
    local code
    code=$(curl -sS -m 10 -o "$dir/keys.json" -w '%{http_code}' -H "Authorization: Bearer $(tr -d '\n' <"$keyfile")" "$url/api/auth/keys")
    if [ "$code" = 200 ] && grep -q '"owner"' "$dir/keys.json"; then pass "GET /api/auth/keys with the owner key: 200"; else fail "GET /api/auth/keys with the owner key: $code $(cat "$dir/keys.json")"; fi
    code=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer fbb_not_a_key' "$url/api/auth/keys")
    if [ "$code" = 401 ]; then pass "a wrong key is refused: 401"; else fail "a wrong key got $code, expected 401"; fi
  else
    fail "owner.key missing or not mode 600: $(ls -l "$keyfile" 2>&1)"
  fi

  kill -TERM "$bridge"
  local status=0
  wait "$bridge" || status=$?
  if [ "$status" = 0 ] && grep -q '"bridge_stopped"' "$log"; then pass "SIGTERM: stopped cleanly, exit 0"; else fail "SIGTERM: exit $status; log tail: $(tail -3 "$log")"; fi
  if grep -Eq 'DeprecationWarning|ExperimentalWarning|DEP0[0-9]+' "$log"; then fail "Node printed a warning: $(grep -E 'Warning|DEP0' "$log" | head -3)"; else pass "no Node warnings in the bridge output"; fi

  # 3. The serialport native addon inside the binary opens a pty pair and passes bytes.
  local a=$dir/ptyA b=$dir/ptyB
  socat -d -d "pty,raw,echo=0,link=$a" "pty,raw,echo=0,link=$b" 2>"$dir/socat.log" &
  local socat=$!
  pids+=("$socat")
  local n=0
  while { [ ! -e "$a" ] || [ ! -e "$b" ]; } && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
  local check
  if check=$("${run[@]}" ports --check "$a" --peer "$b" 2>&1); then
    pass "serial addon: $(tr '\n' ';' <<<"$check")"
  else
    fail "serial addon: $check"
  fi
  kill "$socat" 2>/dev/null
  if ls "$dir/cache"/serialport-*.node >/dev/null 2>&1; then pass "the addon was written under CACHE_DIRECTORY"; else fail "no addon written under CACHE_DIRECTORY ($dir/cache)"; fi
  if [ ! -e "$dir/home" ]; then pass "nothing written under HOME"; else fail "files written under HOME: $(find "$dir/home" | head -3 | tr '\n' ' ')"; fi
  # A cache others may write is refused (what is there would be loaded as code), with a message
  # that says why and no stack trace.
  local shared=$dir/shared-cache refused
  mkdir -p "$shared" && chmod 777 "$shared"
  local -a refuse=(env HOME="$dir/home" CACHE_DIRECTORY="$shared")
  # shellcheck disable=SC2206
  [ -n "$prefix" ] && refuse+=($prefix)
  refuse+=("$bin")
  if refused=$("${refuse[@]}" ports --check "$a" --peer "$b" 2>&1); then
    fail "a world-writable cache was accepted: $refused"
  elif grep -q 'not safe to load code from: group or others may write it' <<<"$refused" && ! grep -q '^    at ' <<<"$refused" && [ -z "$(ls -A "$shared")" ]; then
    pass "a world-writable addon cache is refused, nothing written: $(head -1 <<<"$refused")"
  else
    fail "a world-writable cache: unexpected output: $refused"
  fi

  local list
  if list=$("${run[@]}" ports 2>&1); then pass "ports lists without error ($(grep -c . <<<"$list") lines)"; else fail "ports: $list"; fi

  # 4. The MeshCore simulator and bearer (issue 21): the binary runs `sim meshcore`, and a
  #    bridge from the same binary binds a meshcore interface to it over TCP and comes online.
  local simlog=$dir/sim-meshcore.log
  "${run[@]}" sim meshcore --tcp 127.0.0.1:0 --node-name smoke >"$simlog" 2>&1 &
  local sim=$!
  pids+=("$sim")
  if ! wait_for 60 "$simlog" 'listening on tcp://'; then
    fail "sim meshcore did not start within 60 s: $(cat "$simlog")"
    kill "$sim" 2>/dev/null
    return
  fi
  local simurl
  simurl=$(grep -o 'tcp://[0-9.]*:[0-9]*' "$simlog" | head -1)
  pass "sim meshcore listening on $simurl"
  bridge_online "$dir/bridge-meshcore" "{\"name\":\"mc\",\"kind\":\"meshcore\",\"device\":\"$simurl\"}" \
    "a meshcore interface came online through the simulator" -- "${run[@]}"
  kill -TERM "$sim"
  wait "$sim" 2>/dev/null
  if grep -q '^stopped' "$simlog"; then pass "sim meshcore stopped cleanly on SIGTERM"; else fail "sim meshcore did not say stopped: $(tail -2 "$simlog")"; fi

  # 5. BLE (issue 16): the binary's D-Bus client reaches a board through BlueZ. No Bluetooth
  #    adapter exists here, so BlueZ is the stand-in test/peers/bluez/bluez_standin.py on a
  #    private dbus-daemon, its Nordic UART relayed to `sim rnode`; `ports` lists the bonded
  #    board and a bridge from this binary brings ble://RNode 3B87 online.
  smoke_ble "$dir" "${run[@]}"
}

# bridge_online DIR INTERFACE_JSON WHAT -- COMMAND...: a bridge from the binary on a fresh
# database in DIR creates the interface and must report it connected within 60 s; then stops.
# The caller's environment (DBUS_SYSTEM_BUS_ADDRESS) reaches the bridge.
bridge_online() {
  local odir=$1 body=$2 what=$3
  shift 4
  local log=$odir/bridge.log
  mkdir -p "$odir"
  SERVICE_DB_PATH="$odir/data/bridge.db" SERVICE_LISTEN=127.0.0.1:0 "$@" bridge >"$log" 2>&1 &
  local bridge=$!
  pids+=("$bridge")
  if ! wait_for 60 "$log" '"bridge_listening"'; then
    fail "$what: the bridge did not start within 60 s: $(tail -3 "$log")"
    kill "$bridge" 2>/dev/null
    return
  fi
  local url key created health='' online=''
  url=$(grep '"bridge_listening"' "$log" | sed -E 's/.*"url":"([^"]+)".*/\1/')
  key=$(tr -d '\n' <"$odir/data/owner.key")
  created=$(curl -sS -m 10 -w ' %{http_code}' -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$body" "$url/api/interfaces")
  for _ in $(seq 1 120); do
    health=$(curl -sS -m 5 -H "Authorization: Bearer $key" "$url/api/interfaces/health")
    if [[ "$health" == *'"connected":true'* ]]; then online=1; break; fi
    sleep 0.5
  done
  if [ -n "$online" ]; then pass "$what"; else fail "$what: not online: ${created: -3}; $health"; fi
  kill -TERM "$bridge"
  wait "$bridge" 2>/dev/null
}

# smoke_ble DIR COMMAND...: the BLE check of smoke(), with the binary's command line.
smoke_ble() {
  local bdir=$1/ble
  shift
  mkdir -p "$bdir"
  local standin=$here/test/peers/bluez/bluez_standin.py
  [ -f "$standin" ] || { fail "BLE: $standin is missing"; return; }
  command -v dbus-daemon >/dev/null || need_packages 'a private D-Bus bus for the BLE check' dbus
  /usr/bin/python3 -c 'import dbus, gi' 2>/dev/null || need_packages 'the BlueZ stand-in of the BLE check' python3-dbus python3-gi
  local simlog=$bdir/sim-rnode.log
  "$@" sim rnode --tcp 127.0.0.1:0 >"$simlog" 2>&1 &
  local sim=$!
  pids+=("$sim")
  wait_for 60 "$simlog" 'tcp://' || { fail "BLE: sim rnode did not start: $(cat "$simlog")"; return; }
  local relay
  relay=$(grep -o 'tcp://[0-9.]*:[0-9]*' "$simlog" | head -1 | sed 's|tcp://||')
  local address="unix:path=$bdir/system_bus_socket"
  cat >"$bdir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>$address</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/><allow user="*"/></policy></busconfig>
CONF
  dbus-daemon --nofork --nopidfile --config-file="$bdir/bus.conf" --print-address >"$bdir/bus.out" 2>&1 &
  local busd=$!
  pids+=("$busd")
  wait_for 10 "$bdir/bus.out" 'unix:' || { fail "BLE: dbus-daemon did not start: $(cat "$bdir/bus.out")"; return; }
  printf '{"bus":"%s","adapters":[{"name":"hci0","address":"00:1A:7D:DA:71:13"}],"devices":[{"address":"F0:F5:BD:51:3B:87","name":"RNode 3B87","profile":"nus","relay":"%s","mtu":23}]}\n' \
    "$address" "$relay" >"$bdir/standin.json"
  # The stand-in stops when its standard input ends: a fifo held open by this shell keeps it.
  mkfifo "$bdir/in"
  exec 7<>"$bdir/in"
  /usr/bin/python3 "$standin" "$bdir/standin.json" <&7 >"$bdir/standin.out" 2>&1 &
  local bluez=$!
  pids+=("$bluez")
  if ! wait_for 20 "$bdir/standin.out" '^ready'; then
    fail "BLE: the BlueZ stand-in did not start: $(cat "$bdir/standin.out")"
    exec 7>&-
    return
  fi
  local list
  if list=$(DBUS_SYSTEM_BUS_ADDRESS=$address "$@" ports 2>&1) && grep -q 'ble://F0:F5:BD:51:3B:87' <<<"$list"; then
    pass "ports lists the bonded BLE board: $(grep -A1 'ble://' <<<"$list" | tr -s ' \n' ' ')"
  else
    fail "BLE: ports did not list the board: $list"
  fi
  DBUS_SYSTEM_BUS_ADDRESS=$address bridge_online "$bdir" '{"name":"lora-ble","kind":"rnode","device":"ble://RNode 3B87","settings":{"preset":"eu-868"}}' \
    "an RNode interface on ble://RNode 3B87 came online through BlueZ's D-Bus API" -- "$@"
  kill "$bluez" "$sim" "$busd" 2>/dev/null
  wait "$bluez" "$sim" "$busd" 2>/dev/null
  exec 7>&-
}

for a in "${archs[@]}"; do smoke "$a"; done
arch=all
if [ "$failures" -gt 0 ]; then
  say "$failures check(s) failed"
  exit 1
fi
say "every check passed for: ${archs[*]}"
