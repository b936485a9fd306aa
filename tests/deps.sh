#!/usr/bin/env bash
# deps.sh -- install the Debian packages the build and tests need, if missing.
# The reference SQLite (libsqlite3-dev, sqlite3) is a test-only dependency.
set -e
need=()
[ -f /usr/include/sqlite3.h ] || need+=(libsqlite3-dev)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v strace >/dev/null 2>&1 || need+=(strace)
# a third-party extension for tests/compat/progs/spatialite.c
compgen -G "/usr/lib/*/mod_spatialite.so" >/dev/null || need+=(libsqlite3-mod-spatialite)
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${need[@]}"
