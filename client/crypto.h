/* The one place client/ takes its primitives from OpenSSL's libcrypto.
 *
 * Choice (OpenSSL 3): the deprecated low-level API (MD4(), SHA1_*,
 * DES_ecb_encrypt(), RC4_set_key()/RC4()), not EVP with the legacy
 * provider. Why, measured with client/bench_mppe --evp on the 2-core
 * shared build host (1400-byte MPPE-128 stateless packets, each with
 * the RFC 3078 key change, i.e. two RC4 keyings):
 *  - speed: 298,000 packets/s low-level, 225,000 through
 *    EVP_EncryptInit_ex() on a pre-fetched cipher (a quarter slower);
 *  - memory: an RC4_KEY is 1032 bytes inside our own object; a keyed
 *    EVP_CIPHER_CTX holds 1424 bytes of heap, two per session, on top;
 *  - deployment: EVP's RC4 and MD4 need the legacy provider module on
 *    disk and loaded at run time; the low-level calls need nothing.
 * The low-level calls are deprecated but present in every OpenSSL 3
 * libcrypto (no "no-deprecated" build is shipped by Debian). This header
 * silences the deprecation attributes for client/ alone. */
#ifndef CLIENT_CRYPTO_H
#define CLIENT_CRYPTO_H

#ifndef OPENSSL_SUPPRESS_DEPRECATED
#define OPENSSL_SUPPRESS_DEPRECATED
#endif
#include <openssl/des.h>
#include <openssl/md4.h>
#include <openssl/md5.h>
#include <openssl/rand.h>
#include <openssl/rc4.h>
#include <openssl/sha.h>

#endif
