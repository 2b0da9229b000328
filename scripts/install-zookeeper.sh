#!/usr/bin/env bash
# Makes a local ZooKeeper available for the tests, the demo and the bench. Idempotent: exits at
# once when one is already there. On Debian/Ubuntu as root it installs the `zookeeper` package
# (3.8 on Debian 12: jars under /usr/share/java); elsewhere it says what to install.
set -euo pipefail

have_java() { command -v java >/dev/null 2>&1 && java -version >/dev/null 2>&1; }

if [ -n "${ZOOKEEPER_HOME:-}" ] && ls "$ZOOKEEPER_HOME"/lib/zookeeper-*.jar "$ZOOKEEPER_HOME"/zookeeper-*.jar >/dev/null 2>&1 && have_java; then
  exit 0
fi
if [ -f /usr/share/java/zookeeper.jar ] && have_java; then
  exit 0
fi

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  echo "[install-zookeeper] installing the Debian zookeeper package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  pkgs=(zookeeper)
  have_java || pkgs+=(default-jre-headless)
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >&2
  # The package ships a system service; the harness runs its own servers on free ports.
  (systemctl stop zookeeper || service zookeeper stop || true) >/dev/null 2>&1
  exit 0
fi

cat >&2 <<'MSG'
[install-zookeeper] No ZooKeeper found. Do one of:
  - Debian/Ubuntu:  sudo apt-get install -y zookeeper      (needs Java 11+: default-jre-headless)
  - any system:     unpack an Apache ZooKeeper release and set ZOOKEEPER_HOME to it (needs Java 11+)
  - an existing ensemble: export ZK_CONNECT=host1:2181,host2:2181,host3:2181
MSG
exit 1
