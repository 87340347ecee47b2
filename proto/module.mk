# proto/: what crosses a wire or a process boundary, in the one place that
# the daemon, the client and the plugin all use: PPTP control messages
# (msg), enhanced GRE packets and their numbering (packet, seq), the
# daemon-plugin reports (report), the peers file both read (peers),
# pptpctl's socket protocol (ctl.h), the Router Advertisement (ra), the
# monitor-worker records (monitor) and the sessions' journal one worker
# leaves for the next (journal). Depends on common/ only.
PROTO_OBJ := $(patsubst %.c,%.o,$(wildcard proto/*.c))
proto/libproto.a: $(PROTO_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
CLEAN += proto/*.o proto/libproto.a
