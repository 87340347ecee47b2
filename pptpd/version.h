#ifndef PPTPD_VERSION_H
#define PPTPD_VERSION_H
#define PPTPD_VERSION       "0.8.0"
/* Firmware Revision in SCCRP: major.minor as two bytes. */
#define PPTPD_FIRMWARE_REV  0x0008
#endif
