#!/usr/bin/env bash
# deps.sh -- install what build/shale-server links, if missing: libwebsockets
# (HTTP + WebSocket server), jansson (JSON), protobuf-c (Hrana 3's Protobuf
# encoding: the library and protoc-c), OpenSSL (Ed25519, base64, random
# batons). The library and shell build without them, so a failed
# install is reported and not fatal: `make` then skips the server.
command -v dpkg >/dev/null 2>&1 || exit 0
need=()
[ -f /usr/include/libwebsockets.h ] || need+=(libwebsockets-dev)
[ -f /usr/include/jansson.h ] || need+=(libjansson-dev)
[ -f /usr/include/openssl/evp.h ] || need+=(libssl-dev)
[ -f /usr/include/protobuf-c/protobuf-c.h ] || need+=(libprotobuf-c-dev)
command -v protoc-c >/dev/null 2>&1 || need+=(protobuf-c-compiler)
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
export DEBIAN_FRONTEND=noninteractive
{ $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}"; } ||
  echo "server/deps.sh: ${need[*]} not installed; build/shale-server is skipped" >&2
exit 0
