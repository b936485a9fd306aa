#!/usr/bin/env bash
# deps.sh -- install what the shell needs for line editing (libedit-dev), if
# missing. The shell still builds without it (plain line reading), so a
# failed install is reported and not fatal.
command -v dpkg >/dev/null 2>&1 || exit 0
[ -f /usr/include/editline/readline.h ] && exit 0
echo "installing: libedit-dev"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
export DEBIAN_FRONTEND=noninteractive
{ $sudo apt-get update -qq && $sudo apt-get install -y -qq libedit-dev; } ||
  echo "cli/deps.sh: libedit-dev not installed; the shell reads lines without editing" >&2
exit 0
