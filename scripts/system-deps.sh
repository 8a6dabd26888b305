#!/usr/bin/env bash
# System packages some tests need, from Debian's archive: Chromium and its
# driver (the review page and the web example are tested in a real browser)
# and the PostgreSQL server binaries (the PostgreSQL state store is tested
# against a real server the tests start on 127.0.0.1), and Node with npm
# (the AG-UI and AI SDK adapters are tested with those protocols' JS clients).
# Idempotent: installs only what is missing, and only as root with apt-get;
# otherwise it says what is missing and the tests that need it skip with a
# printed reason.
set -u
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
# Node and npm: the web adapters are tested with the protocols' JS clients (tests/js)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  missing+=(postgresql)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: not installing ${missing[*]} (needs root and apt-get); tests that need them will skip" >&2
  exit 0
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || echo "system-deps: apt-get could not install ${missing[*]}; tests that need them will skip" >&2
exit 0
