#!/usr/bin/env bash
# Renders a run's HTML report in headless Chromium and saves a screenshot, to
# look at the report as a reader would. Needs Debian's chromium package
# (`apt-get install chromium`); nothing is fetched from the network.
#
#   scripts/screenshot-report.sh [SCENARIO] [OUT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
scenario="${1:-scenarios/27-three-way-deadlock.toml}"
png="${2:-target/report.png}"
html="$(mktemp --suffix=.html)"
cargo run --quiet --release -- run "$scenario" --html "$html" >/dev/null || true
profile="$(mktemp -d)"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1400,2200 \
  --screenshot="$png" "file://$html" 2>/dev/null
rm -rf "$profile" "$html"
echo "wrote $png"
