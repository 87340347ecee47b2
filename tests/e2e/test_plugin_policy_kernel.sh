#!/bin/bash
# test_plugin_policy_kernel.sh -- test_plugin_policy.sh on the kernel data
# path (`datapath kernel`): the same per-peer MPPE policy, session reports
# and wtmp records when the plugin also holds the kernel's PPTP channel.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_plugin_policy_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_plugin_policy.sh" "$@"
