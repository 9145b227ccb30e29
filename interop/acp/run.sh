#!/usr/bin/env bash
# Runs the ACP interop suite: builds agentloop and the scripted API,
# installs the editors' ACP client library and Zed's Claude adapter, and
# runs every test/*.test.mjs with node:test: test/native.test.mjs against
# `agentloop acp`, test/adapter.test.mjs against the adapter with
# CLAUDE_CODE_EXECUTABLE pointing at agentloop. Ends with a line
# "N passed, N failed".
#
# Exit status as interop/nodesuite.sh's, which does the work.
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../nodesuite.sh" "$here" @agentclientprotocol/sdk "$@"
