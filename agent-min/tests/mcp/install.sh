#!/usr/bin/env bash
# Installs the real MCP servers agent-min's tests start, at pinned versions, into a cache folder
# ($AGENT_MIN_MCP_SERVERS, else <repo>/target/mcp-servers):
#   - @modelcontextprotocol/server-everything and server-filesystem from npm, exactly as locked
#     in node/package-lock.json (`npm ci`);
#   - the official Python MCP SDK (and its dependencies) as pinned in requirements.txt, in a venv.
# A finished install whose stamp matches the lock files is kept, so CI can cache the folder.
# Fails (non-zero) if anything is missing or cannot be installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
dest=${AGENT_MIN_MCP_SERVERS:-$repo/target/mcp-servers}
for tool in node npm python3 sha256sum; do
  command -v "$tool" >/dev/null || { echo "install.sh: $tool is required to install the MCP test servers"; exit 1; }
done
stamp=$(cat "$here/node/package-lock.json" "$here/requirements.txt" | sha256sum | cut -d' ' -f1)
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$stamp" ]; then
  echo "MCP test servers already installed in $dest"
  exit 0
fi
# Only what this script creates is replaced (the folder may be shared with other caches).
rm -rf "$dest/node" "$dest/venv" "$dest/.installed"
mkdir -p "$dest/node"
cp "$here/node/package.json" "$here/node/package-lock.json" "$dest/node/"
npm ci --prefix "$dest/node" --no-audit --no-fund
python3 -m venv "$dest/venv"
"$dest/venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$here/requirements.txt"
"$dest/venv/bin/python" -c "import mcp.server.fastmcp"
echo "$stamp" > "$dest/.installed"
echo "MCP test servers installed in $dest"
