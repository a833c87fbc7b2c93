#!/usr/bin/env bash
# Installs fieldbridge on this machine (issue 3; docs/raspberry-pi.md):
#   /usr/local/bin/fieldbridge                      the executable for this CPU (dist/fieldbridge-linux-<arch>)
#   /etc/systemd/system/fieldbridge.service         the bridge unit (enabled)
#   /etc/systemd/system/fieldbridge-hub.service     the hub unit (installed, not enabled)
#   /etc/systemd/system/fieldbridge.service.d/ble.conf   BLE drop-in, commented out (kept if edited)
#   /etc/modules-load.d/fieldbridge.conf            usbserial, cdc_acm at boot
#   /etc/udev/rules.d/70-fieldbridge-modemmanager.rules  keeps ModemManager off the radios
# Running it again is harmless: unchanged files stay, a new binary replaces the old one
# (kept as fieldbridge.previous for a rollback) and a running bridge is restarted.
#
#   sudo scripts/install.sh [--binary PATH]
#   scripts/install.sh --prefix /tmp/root            (or DESTDIR=/tmp/root) into another root:
#                                                     files only, systemd is not touched
#   sudo scripts/install.sh --uninstall [--purge]    remove; --purge also deletes the database,
#                                                     owner.key, cache and /etc/default files
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

here=$(cd "$(dirname "$0")/.." && pwd)
prefix=${DESTDIR:-}
binary=''
action=install
purge=''
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --binary) [ $# -ge 2 ] || { echo "install.sh: --binary needs a file" >&2; exit 2; }; binary=$2; shift 2 ;;
    --binary=*) binary=${1#--binary=}; shift ;;
    --uninstall) action=uninstall; shift ;;
    --purge) purge=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
if [ -n "$purge" ] && [ "$action" != uninstall ]; then echo "install.sh: --purge goes with --uninstall" >&2; exit 2; fi
prefix=${prefix%/}
real_root=''
[ -z "$prefix" ] && real_root=1

say() { printf '[install] %s\n' "$*"; }
die() { printf '[install] error: %s\n' "$*" >&2; exit 1; }

# Only the real root, and only when systemd runs, gets systemctl calls.
systemd_running() { [ -n "$real_root" ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null; }

if [ -n "$real_root" ] && [ "$(id -u)" != 0 ]; then die "installing into / needs root: run it with sudo (or use --prefix DIR)"; fi

# source (relative to systemd/) | destination | mode. One list serves install and uninstall.
config_files=(
  "fieldbridge.service|/etc/systemd/system/fieldbridge.service|0644"
  "fieldbridge-hub.service|/etc/systemd/system/fieldbridge-hub.service|0644"
  "modules-load.d/fieldbridge.conf|/etc/modules-load.d/fieldbridge.conf|0644"
  "udev/70-fieldbridge-modemmanager.rules|/etc/udev/rules.d/70-fieldbridge-modemmanager.rules|0644"
)
# Installed once and then left alone: the operator edits it to turn BLE on.
dropin_src=fieldbridge.service.d/ble.conf
dropin_dest=/etc/systemd/system/fieldbridge.service.d/ble.conf
bin_dest=/usr/local/bin/fieldbridge
# DynamicUser keeps the real directories under /var/lib/private and /var/cache/private.
data_paths=(
  /var/lib/fieldbridge /var/lib/private/fieldbridge /var/cache/fieldbridge /var/cache/private/fieldbridge
  /var/lib/fieldbridge-hub /var/lib/private/fieldbridge-hub /var/cache/fieldbridge-hub /var/cache/private/fieldbridge-hub
  /etc/default/fieldbridge /etc/default/fieldbridge-hub
)

# put SRC DEST MODE: copy through a temporary file and rename, so a running binary is never
# overwritten in place ("text file busy") and a half-written file never has the final name.
put() {
  local src=$1 dest=$prefix$2 mode=$3
  if [ -f "$dest" ] && cmp -s "$src" "$dest" && [ "$(stat -c %a "$dest")" = "${mode#0}" ]; then
    say "unchanged  $2"
    return 1
  fi
  mkdir -p "$(dirname "$dest")"
  install -m "$mode" "$src" "$dest.new"
  mv -f "$dest.new" "$dest"
  say "installed  $2 (mode $mode)"
}

install_all() {
  if [ -z "$binary" ]; then
    local machine arch
    machine=$(uname -m)
    case "$machine" in
      x86_64) arch=x64 ;;
      aarch64 | arm64) arch=arm64 ;;
      armv7l | armv6l) die "this is a 32-bit OS ($machine); fieldbridge needs 64-bit Raspberry Pi OS (Node 24 has no 32-bit ARM build)" ;;
      *) die "no fieldbridge build for $machine" ;;
    esac
    binary=$here/dist/fieldbridge-linux-$arch
    [ -f "$binary" ] || die "$binary is missing: run 'npm run build' first, or pass --binary PATH"
  fi
  [ -f "$binary" ] || die "--binary $binary: no such file"
  # Read the new binary first: it may be fieldbridge.previous itself (a rollback), which the
  # next step overwrites.
  staged=$(mktemp)
  trap 'rm -f "$staged"' EXIT
  cp "$binary" "$staged"
  binary=$staged

  local changed=''
  # Keep the binary being replaced for a rollback (docs/raspberry-pi.md).
  if [ -f "$prefix$bin_dest" ] && ! cmp -s "$binary" "$prefix$bin_dest"; then
    cp -p "$prefix$bin_dest" "$prefix$bin_dest.previous"
    say "kept the old binary as $bin_dest.previous"
  fi
  put "$binary" "$bin_dest" 0755 && changed=1
  local entry src dest mode
  for entry in "${config_files[@]}"; do
    IFS='|' read -r src dest mode <<<"$entry"
    put "$here/systemd/$src" "$dest" "$mode" && changed=1
  done
  if [ -e "$prefix$dropin_dest" ]; then
    say "kept       $dropin_dest (yours to edit)"
  else
    put "$here/systemd/$dropin_src" "$dropin_dest" 0644 && changed=1
  fi

  if ! systemd_running; then
    if [ -n "$real_root" ]; then say "systemd is not running: enable the unit later with: systemctl enable fieldbridge"; else say "installed into $prefix: systemd not touched"; fi
    return 0
  fi
  systemctl daemon-reload
  command -v udevadm >/dev/null && udevadm control --reload-rules || true
  command -v modprobe >/dev/null && modprobe -a usbserial cdc_acm 2>/dev/null || true
  systemctl enable fieldbridge.service
  if systemctl is-active --quiet fieldbridge.service; then
    if [ -n "$changed" ]; then systemctl restart fieldbridge.service && say "restarted fieldbridge"; fi
  else
    say "enabled; start it now with: sudo systemctl start fieldbridge"
  fi
}

uninstall_all() {
  if systemd_running; then
    systemctl disable --now fieldbridge.service fieldbridge-hub.service 2>/dev/null || true
  fi
  local entry src dest mode
  for dest in "$bin_dest" "$bin_dest.previous" "$dropin_dest"; do
    [ -e "$prefix$dest" ] && rm -f "$prefix$dest" && say "removed    $dest"
  done
  rmdir "$prefix$(dirname "$dropin_dest")" 2>/dev/null || true
  for entry in "${config_files[@]}"; do
    IFS='|' read -r src dest mode <<<"$entry"
    [ -e "$prefix$dest" ] && rm -f "$prefix$dest" && say "removed    $dest"
  done
  if systemd_running; then systemctl daemon-reload; fi
  local path
  for path in "${data_paths[@]}"; do
    [ -e "$prefix$path" ] || [ -L "$prefix$path" ] || continue
    if [ -n "$purge" ]; then
      rm -rf "$prefix$path"
      say "purged     $path"
    else
      say "kept       $path (remove it with --uninstall --purge)"
    fi
  done
  return 0
}

case "$action" in
  install) install_all ;;
  uninstall) uninstall_all ;;
esac
say "done"
