#!/usr/bin/env bash
# Installs the official ACP TypeScript SDK (@agentclientprotocol/sdk, exactly as locked in
# package-lock.json: `npm ci`) whose client drives `agent-min acp` in tests/it/acp.rs, into a
# cache folder ($AGENT_MIN_ACP_CLIENT, else <repo>/target/acp-client). A finished install whose
# stamp matches the lock file is kept, so CI can cache the folder. Fails (non-zero) if anything
# is missing or cannot be installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
dest=${AGENT_MIN_ACP_CLIENT:-$repo/target/acp-client}
for tool in node npm sha256sum; do
  command -v "$tool" >/dev/null || { echo "install.sh: $tool is required to install the ACP client SDK"; exit 1; }
done
stamp=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$stamp" ]; then
  echo "ACP client SDK already installed in $dest"
  exit 0
fi
rm -rf "$dest/node_modules" "$dest/.installed"
mkdir -p "$dest"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
npm ci --prefix "$dest" --no-audit --no-fund
test -f "$dest/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"
echo "$stamp" > "$dest/.installed"
echo "ACP client SDK installed in $dest"
