/* The one place client/ takes its primitives from OpenSSL's libcrypto.
 *
 * Choice (OpenSSL 3): the deprecated low-level API (MD4(), SHA1_*,
 * DES_ecb_encrypt(), RC4_set_key()/RC4()), not EVP with the legacy
 * provider. Why, measured by client/bench_mppe on this host:
 *  - RC4 in MPPE is rekeyed for every packet in stateless mode. A
 *    low-level RC4_set_key() is a plain key schedule into a caller-owned
 *    RC4_KEY; with EVP every rekey is an EVP_CipherInit_ex() through the
 *    provider (a key-length call for 8-byte keys, a fresh provider
 *    context), several times slower (bench_mppe --evp prints both).
 *  - An RC4_KEY is 1 KB and lives inside our own object; an
 *    EVP_CIPHER_CTX plus its provider context is heap memory we do not
 *    control, per direction per session (bench_mppe prints it too).
 *  - The legacy provider must be loaded at run time (a module file on
 *    disk); the low-level calls have no such dependency.
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
