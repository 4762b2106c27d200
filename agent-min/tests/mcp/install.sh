#!/usr/bin/env bash
# Installs the real MCP servers the tests start (pinned versions) into a cache folder:
#   $AGENT_MIN_MCP_SERVERS, else <repo>/target/mcp-servers
# Idempotent: a finished install (its stamp file matches the pins) is kept.
set -euo pipefail
cd "$(dirname "$0")/../../.."
EVERYTHING=2026.8.31
FILESYSTEM=2026.8.31
PY_MCP=1.27.2
dest=${AGENT_MIN_MCP_SERVERS:-$PWD/target/mcp-servers}
stamp="everything=$EVERYTHING filesystem=$FILESYSTEM mcp=$PY_MCP"
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$stamp" ]; then
  echo "MCP test servers already installed in $dest"; exit 0
fi
command -v npm >/dev/null || { echo "npm is required to install the MCP test servers (node and npm)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 (3.10+) is required for the Python SDK test server"; exit 1; }
mkdir -p "$dest/node"
rm -f "$dest/.installed"
(cd "$dest/node" && [ -f package.json ] || echo '{"private":true}' > "$dest/node/package.json")
npm install --prefix "$dest/node" --no-audit --no-fund --save-exact \
  "@modelcontextprotocol/server-everything@$EVERYTHING" "@modelcontextprotocol/server-filesystem@$FILESYSTEM"
python3 -m venv "$dest/venv"
"$dest/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP"
echo "$stamp" > "$dest/.installed"
echo "MCP test servers installed in $dest"
