# gre/: the GRE engine (the daemon's data path): one raw socket, async
# HDLC toward pppd's pty, batched I/O. Links proto/ and common/.
GRE_OBJ := $(patsubst %.c,%.o,$(wildcard gre/*.c))
gre/libgre.a: $(GRE_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
bench: gre/libgre.a proto/libproto.a common/libcommon.a
	$(MAKE) -C gre/bench
CLEAN += gre/*.o gre/libgre.a
