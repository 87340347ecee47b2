/* The guard's eBPF object (pptpd/bpf/kguard.bpf.o, built from
 * pptpd/bpf/kguard.c) inside pptpd, for pptpd/kguard.c to load from
 * memory: nothing to install beside the binary, and no file that could
 * go missing or belong to another version. */
	.section .rodata
	.balign 8
	.global kguard_bpf_obj
	.global kguard_bpf_obj_end
kguard_bpf_obj:
	.incbin "pptpd/bpf/kguard.bpf.o"
kguard_bpf_obj_end:
	.section .note.GNU-stack,"",@progbits
