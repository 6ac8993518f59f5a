# Sourced by scripts/test, scripts/demo and .ci/run: installs or checks what they need, from package
# registries only (PyPI, Debian), and says plainly what to install when it cannot.
#   ensure_uv               uv on PATH: found, else pipx, else pip --user, else a private venv;
#                           as root with apt-get and none of those, Debian's pipx first
#   check_plugin_tools      Node.js >= NODE_MIN and Chromium for the plugin's tests; as root with
#                           apt-get, Debian's chromium is installed when missing
# Everything it installs for this user lands in ~/.local/bin, which it puts on PATH.

NODE_MIN=20.19  # obsidian-plugin/package.json "engines"

_say() { echo "setup: $*" >&2; }

_is_root_with_apt() { [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; }

_uv_with_pipx() {
  command -v pipx >/dev/null 2>&1 && PIPX_BIN_DIR="$1" pipx install --quiet uv >/dev/null 2>&1 \
    && command -v uv >/dev/null 2>&1
}

_uv_with_pip_user() {
  python3 -m pip install --user --quiet uv >/dev/null 2>&1 && command -v uv >/dev/null 2>&1
}

_uv_in_venv() {
  local venv="${XDG_DATA_HOME:-$HOME/.local/share}/vask/uv-venv"
  python3 -m venv "$venv" >/dev/null 2>&1 && "$venv/bin/python" -m pip install --quiet uv >/dev/null 2>&1 \
    && mkdir -p "$1" && ln -sf "$venv/bin/uv" "$1/uv" && command -v uv >/dev/null 2>&1
}

ensure_uv() {
  local bin="$HOME/.local/bin"
  case ":$PATH:" in *":$bin:"*) ;; *) export PATH="$bin:$PATH" ;; esac
  command -v uv >/dev/null 2>&1 && return 0
  _say "uv is not installed; installing it from PyPI into $bin"
  # uv's documented way from PyPI is an isolated install with pipx; without pipx, a user install
  # works except where the system Python is "externally managed" (Debian, Ubuntu), and a private
  # venv works there when python3-venv is installed; as root, Debian's pipx is the last resort.
  _uv_with_pipx "$bin" || _uv_with_pip_user || _uv_in_venv "$bin" \
    || { _is_root_with_apt && _say "installing pipx with apt-get" \
      && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pipx) >/dev/null 2>&1 \
      && _uv_with_pipx "$bin"; } || true
  if command -v uv >/dev/null 2>&1; then
    _say "installed $(uv --version) as $(command -v uv); add $bin to your PATH to run uv yourself"
    return 0
  fi
  _say "could not install uv. Install it with one of:"
  _say "  pipx install uv            (Debian/Ubuntu: sudo apt-get install pipx first)"
  _say "  python3 -m pip install --user uv"
  _say "  see https://docs.astral.sh/uv/getting-started/installation/"
  return 1
}

# 0 when version $1 (e.g. v20.19.2) is at least $2 (e.g. 20.19).
_version_at_least() {
  local have=${1#v} want=$2 h1 h2 w1 w2
  IFS=. read -r h1 h2 _ <<<"$have"
  IFS=. read -r w1 w2 _ <<<"$want"
  [[ $h1 =~ ^[0-9]+$ && ${h2:-0} =~ ^[0-9]+$ ]] || return 1
  ((h1 > w1 || (h1 == w1 && ${h2:-0} >= w2)))
}

check_plugin_tools() {
  local missing=0 version
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    _say "the Obsidian plugin's tests need Node.js >= $NODE_MIN with npm, and node is not on PATH:"
    _say "  install it from https://nodejs.org (or your package manager, if it has $NODE_MIN or newer)"
    missing=1
  else
    version=$(node --version 2>/dev/null || true)
    if ! _version_at_least "$version" "$NODE_MIN"; then
      _say "the Obsidian plugin's tests need Node.js >= $NODE_MIN; $(command -v node) is ${version:-unknown}:"
      _say "  install a newer one from https://nodejs.org (or your package manager)"
      missing=1
    fi
  fi
  # The end-to-end test drives a real Chromium: $CHROMIUM_PATH, else the first one found.
  if [[ -n ${CHROMIUM_PATH:-} ]]; then
    if [[ ! -x $CHROMIUM_PATH ]]; then
      _say "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable: point it at Chromium, or unset it"
      missing=1
    fi
  else
    local candidate
    for candidate in chromium chromium-browser google-chrome-stable google-chrome; do
      if command -v "$candidate" >/dev/null 2>&1; then
        CHROMIUM_PATH=$(command -v "$candidate")
        break
      fi
    done
    if [[ -z ${CHROMIUM_PATH:-} ]] && _is_root_with_apt; then
      _say "Chromium is missing; installing Debian's chromium with apt-get (the plugin's browser test)"
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 || true
      command -v chromium >/dev/null 2>&1 && CHROMIUM_PATH=$(command -v chromium)
    fi
    if [[ -z ${CHROMIUM_PATH:-} ]]; then
      _say "the Obsidian plugin's browser test needs Chromium, and none was found:"
      _say "  sudo apt-get install chromium   (Debian; on Ubuntu: chromium-browser), or set CHROMIUM_PATH"
      missing=1
    else
      export CHROMIUM_PATH
    fi
  fi
  return "$missing"
}
