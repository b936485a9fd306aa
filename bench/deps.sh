#!/usr/bin/env bash
# deps.sh -- install what the benchmark report needs (gnuplot for the chart), if missing.
set -e
command -v gnuplot >/dev/null 2>&1 && exit 0
echo "installing: gnuplot-nox"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq gnuplot-nox
