#!/bin/bash
# test_plugin_renegotiate_kernel.sh -- test_plugin_renegotiate.sh on the
# kernel data path (`datapath kernel`): the MPPE policy holds through an
# LCP renegotiation when the plugin also holds the kernel's PPTP channel.
#
#   scripts/e2e-run tests/e2e/test_plugin_renegotiate_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_plugin_renegotiate.sh" "$@"
