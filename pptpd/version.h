#ifndef PPTPD_VERSION_H
#define PPTPD_VERSION_H
#define PPTPD_VERSION       "0.7.0"
/* Firmware Revision in SCCRP: major.minor as two bytes. */
#define PPTPD_FIRMWARE_REV  0x0007
#endif
