#!/usr/bin/env bash
# Makes a fresh Debian machine ready for the test suite: installs the Debian packages the
# tests use when they are missing (as root, through apt-get), and starts PostgreSQL and
# Mosquitto when nothing answers on their ports. Safe to run again: it only adds what lacks.
set -euo pipefail

log() { printf 'setup: %s\n' "$*"; }

# command-or-file the tests need -> Debian package that provides it
declare -A NEED=(
  [socat]=socat
  [gammu]=gammu
  [mosquitto]=mosquitto
  [mosquitto_pub]=mosquitto-clients
  [pg_ctlcluster]=postgresql
  [promtool]=prometheus
  [chromium]=chromium
  [qemu-aarch64-static]=qemu-user-static
  [aarch64-linux-gnu-strip]=binutils-aarch64-linux-gnu
  [/usr/aarch64-linux-gnu/lib/libc.so.6]=libc6-arm64-cross
  [/usr/aarch64-linux-gnu/lib/libstdc++.so.6]=libstdc++6-arm64-cross
  [/usr/aarch64-linux-gnu/lib/libgcc_s.so.1]=libgcc-s1-arm64-cross
  [file]=file
  # test/systemd/units.test.ts verifies the shipped units with systemd-analyze.
  [systemd-analyze]=systemd
  # scripts/test.sh runs the suite a second time with the clock a year ahead (issue 30).
  [faketime]=faketime
  [unzip]=unzip
  [curl]=curl
  # Reticulum and LXMF (test peers, sources outside the repository: docs/reticulum.md) need these
  # under Debian's /usr/bin/python3.
  [/usr/lib/python3/dist-packages/cryptography/__init__.py]=python3-cryptography
  [/usr/lib/python3/dist-packages/serial/__init__.py]=python3-serial
  # BLE tests (issue 16): a private dbus-daemon and the BlueZ stand-in test/peers/bluez/, which
  # uses Debian's D-Bus and GLib bindings under /usr/bin/python3. `dbus` brings dbus-daemon.
  # The read-only card test (issue 30): an ext4 image on a loop device, checked after its abort.
  [mkfs.ext4]=e2fsprogs
  [e2fsck]=e2fsprogs
  [findmnt]=util-linux
  [dbus-daemon]=dbus
  [/usr/lib/python3/dist-packages/dbus/__init__.py]=python3-dbus
  [/usr/lib/python3/dist-packages/gi/__init__.py]=python3-gi
  # The APRS bearer's independent peer: Dire Wolf's decoder, KISS TNC and tools (docs/aprs.md).
  [decode_aprs]=direwolf
  [kissutil]=direwolf
)

missing=()
for what in "${!NEED[@]}"; do
  if [[ "$what" == /* ]]; then [[ -e "$what" ]] || missing+=("${NEED[$what]}")
  else command -v "$what" >/dev/null 2>&1 || missing+=("${NEED[$what]}"); fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    log "missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})"
    exit 1
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! port_open 5432; then
  log "starting PostgreSQL"
  for version in $(ls /etc/postgresql); do
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  done
  for _ in $(seq 1 30); do port_open 5432 && break; sleep 0.5; done
  port_open 5432 || { log "PostgreSQL did not start on 127.0.0.1:5432"; exit 1; }
fi
# The tests connect as postgres over TCP without a password (trust), as on the CI machines.
if ! psql -h 127.0.0.1 -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1; then
  log "PostgreSQL refuses passwordless TCP logins for postgres: enabling trust for 127.0.0.1 (test machine only)"
  hba=$(su postgres -c "psql -Atc 'show hba_file'")
  sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  su postgres -c "psql -Atc 'select pg_reload_conf()'" >/dev/null
fi

if ! port_open 1883; then
  log "starting Mosquitto"
  mosquitto -d -c /etc/mosquitto/mosquitto.conf
  for _ in $(seq 1 20); do port_open 1883 && break; sleep 0.25; done
  port_open 1883 || { log "Mosquitto did not start on 127.0.0.1:1883"; exit 1; }
fi
log "ready: PostgreSQL on 127.0.0.1:5432, Mosquitto on 127.0.0.1:1883"
