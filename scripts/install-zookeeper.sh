#!/usr/bin/env bash
# Makes a local ZooKeeper available for the tests, the demo and the bench, plus Apache Curator's
# jars for the interop tests. Idempotent: installs only what is missing. On Debian/Ubuntu as
# root it uses the `zookeeper` (3.8 on Debian 12, jars under /usr/share/java) and
# `libcurator-recipes-java` and `libcurator-discovery-java` (service discovery, with Jackson)
# packages; elsewhere it says what to install.
set -euo pipefail

# The harness runs $JAVA_HOME/bin/java when JAVA_HOME is set, else java from PATH: check the same one.
java_cmd="${JAVA_HOME:+$JAVA_HOME/bin/}java"
have_java() { command -v "$java_cmd" >/dev/null 2>&1 && "$java_cmd" -version >/dev/null 2>&1; }
have_zk() {
  # An Apache release keeps zookeeper-<version>.jar in lib/ (older ones at the top): either will do,
  # as in the harness (test/harness/local-install.ts).
  { [ -n "${ZOOKEEPER_HOME:-}" ] && compgen -G "$ZOOKEEPER_HOME/lib/zookeeper-[0-9]*.jar" >/dev/null || compgen -G "${ZOOKEEPER_HOME:-/nonexistent}/zookeeper-[0-9]*.jar" >/dev/null; } ||
    [ -f /usr/share/java/zookeeper.jar ]
}
have_curator() { [ -f /usr/share/java/curator-recipes.jar ] && [ -f /usr/share/java/curator-x-discovery.jar ]; }

if have_java && have_zk && have_curator; then
  exit 0
fi

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  pkgs=()
  have_zk || pkgs+=(zookeeper)
  have_curator || pkgs+=(libcurator-recipes-java libcurator-discovery-java)
  have_java || pkgs+=(default-jre-headless)
  echo "[install-zookeeper] installing ${pkgs[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >&2
  # The zookeeper package may start a system service; the harness runs its own servers on free ports.
  (systemctl stop zookeeper || service zookeeper stop || true) >/dev/null 2>&1
  if ! have_java; then
    echo "[install-zookeeper] $java_cmd does not run${JAVA_HOME:+ (JAVA_HOME=$JAVA_HOME: unset it or point it at a JDK 11+)}" >&2
    exit 1
  fi
  exit 0
fi

if have_java && have_zk; then
  echo "[install-zookeeper] Curator jars not found (/usr/share/java/curator-recipes.jar, curator-x-discovery.jar): the Curator interop tests will be skipped" >&2
  exit 0
fi

cat >&2 <<'MSG'
[install-zookeeper] No ZooKeeper found. Do one of:
  - Debian/Ubuntu:  sudo apt-get install -y zookeeper libcurator-recipes-java libcurator-discovery-java   (needs Java 11+)
  - any system:     unpack an Apache ZooKeeper release and set ZOOKEEPER_HOME to it (needs Java 11+)
  - an existing ensemble: export ZK_CONNECT=host1:2181,host2:2181,host3:2181
MSG
exit 1
