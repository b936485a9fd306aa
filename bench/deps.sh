#!/usr/bin/env bash
# deps.sh -- install what the benchmark report needs (gnuplot for the chart; with the argument
# "instr", valgrind for make bench INSTR=1; with "net", libcurl for make netbench's Hrana client),
# if missing.
set -e
need=""
command -v gnuplot >/dev/null 2>&1 || need="gnuplot-nox"
if [ "$1" = instr ] && ! command -v valgrind >/dev/null 2>&1; then need="$need valgrind"; fi
if [ "$1" = net ] && [ ! -f /usr/include/x86_64-linux-gnu/curl/curl.h ] && [ ! -f /usr/include/curl/curl.h ]; then
  need="$need libcurl4-openssl-dev"
fi
[ -z "$need" ] && exit 0
echo "installing: $need"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq $need
