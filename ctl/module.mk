# ctl/: pptpctl, which shares only the protocol of proto/ctl.h (and the
# version) with the daemon: talk.c one exchange on the control socket,
# upwait.c upgrade --wait.
CTL_OBJ := ctl/pptpctl.o ctl/talk.o ctl/upwait.o
ctl/pptpctl: $(CTL_OBJ) common/libcommon.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(CTL_OBJ) common/libcommon.a
CLEAN += ctl/*.o ctl/pptpctl
