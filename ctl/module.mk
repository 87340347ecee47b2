# ctl/: pptpctl, which shares only the protocol of proto/ctl.h (and the
# version) with the daemon.
ctl/pptpctl: ctl/pptpctl.o
	$(CC) $(ALL_LDFLAGS) -o $@ $<
CLEAN += ctl/*.o ctl/pptpctl
