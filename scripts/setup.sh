#!/usr/bin/env bash
# Installs what blockscale needs from Debian packages (and PyPI for the Python oracles), only if
# missing. Idempotent and silent when everything is present.
set -euo pipefail

#   scripts/setup.sh            what the build and the CI suite need
#   scripts/setup.sh --aarch64  also the AArch64 cross compiler and qemu-user (scripts/test.sh --aarch64)
apt_packages=(cmake ninja-build g++ ccache libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
              python3 python3-pip clang libclang-rt-14-dev libomp-14-dev xz-utils)
for a in "$@"; do
  case "$a" in
    --aarch64) apt_packages+=(g++-aarch64-linux-gnu qemu-user) ;;
    *) echo "setup.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python oracles for the ml_dtypes preset tests (PyPI): numpy and ml_dtypes at a pinned version.
PY=python3  # the python3 on PATH, which CMake's FindPython3 finds for the tests
have_oracles() { "$PY" -c 'import ml_dtypes, numpy; assert ml_dtypes.__version__ == "0.6.0"' 2>/dev/null; }
if ! have_oracles; then
  echo "setup: installing numpy and ml_dtypes==0.6.0 from PyPI"
  pip_args=(-m pip install -q --disable-pip-version-check numpy "ml_dtypes==0.6.0")
  # A distribution's own Python (Debian 12's python3) is "externally managed" (PEP 668) and refuses
  # a plain install; the oracles then go to the user's site-packages (pip skips numpy there when
  # Debian's python3-numpy already satisfies it).
  "$PY" "${pip_args[@]}" || "$PY" "${pip_args[@]}" --user --break-system-packages || true
  # Without the oracles the ml_dtypes tests would report "skipped" and the suite would pass without
  # them, so a failed install stops here.
  if ! have_oracles; then
    echo "setup: numpy and ml_dtypes 0.6.0 could not be installed for $(command -v "$PY" || echo "$PY (not found)")" \
         "(the ml_dtypes oracle tests need them); install them for that interpreter" >&2
    exit 1
  fi
fi
