#!/usr/bin/env bash
# Runs the interop suite: builds agentloop and the scripted API, installs the
# official TypeScript Agent SDK (without its bundled engine), runs every
# test/*.test.mjs with node:test, and ends with a line "N passed, N failed".
#
# Exit status as interop/nodesuite.sh's, which does the work.
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../nodesuite.sh" "$here" @anthropic-ai/claude-agent-sdk "$@"
