//! WinZip AES encryption (AE-1/AE-2) exactly as the WinZip specification
//! describes it: PBKDF2-HMAC-SHA1 with 1,000 iterations derives the AES key,
//! the HMAC key and a 2-byte password verifier from the password and a random
//! salt; data is encrypted with AES in CTR mode using a 16-byte little-endian
//! counter that starts at 1; the authentication code is the first 10 bytes of
//! HMAC-SHA1 over the *ciphertext*.
//!
//! Everything is AWS-LC's (`aws-lc-rs`), the one AES the binary carries
//! (rustls, for the FIX engine's TLS, brings it too): its SHA-1 runs
//! ~1.9 GB/s on this project's SHA-NI machines against ~1.1 GB/s for the
//! RustCrypto `sha1` crate, and the MAC is most of what encryption adds to a
//! level-6 archive. No ready-made CTR mode counts little-endian, so `CtrLe`
//! makes WinZip's keystream from AWS-LC's AES-ECB over the counter blocks, a
//! batch at a time. The RustCrypto crates (`aes`, `ctr`, `hmac`, `sha1`,
//! `pbkdf2`) stay as the tests' independent oracle.

use std::num::NonZeroU32;

use aws_lc_rs::cipher::{AES_128, AES_192, AES_256, StreamingEncryptingKey, UnboundCipherKey};
use aws_lc_rs::{hmac, pbkdf2};

/// AES key size for WinZip AES encryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AesStrength {
    /// AES-128 (strength code 1, 8-byte salt).
    Aes128,
    /// AES-192 (strength code 2, 12-byte salt).
    Aes192,
    /// AES-256 (strength code 3, 16-byte salt).
    Aes256,
}

impl AesStrength {
    /// The strength byte stored in the 0x9901 extra field.
    pub fn code(self) -> u8 {
        match self {
            AesStrength::Aes128 => 1,
            AesStrength::Aes192 => 2,
            AesStrength::Aes256 => 3,
        }
    }
    /// Parses the strength byte.
    pub fn from_code(c: u8) -> Option<AesStrength> {
        match c {
            1 => Some(AesStrength::Aes128),
            2 => Some(AesStrength::Aes192),
            3 => Some(AesStrength::Aes256),
            _ => None,
        }
    }
    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        match self {
            AesStrength::Aes128 => 16,
            AesStrength::Aes192 => 24,
            AesStrength::Aes256 => 32,
        }
    }
    /// Salt length in bytes (half the key length).
    pub fn salt_len(self) -> usize {
        self.key_len() / 2
    }
    /// Bytes the encryption adds to an entry: salt, verifier and auth code.
    pub fn overhead(self) -> u64 {
        (self.salt_len() + VERIFIER_LEN + MAC_LEN) as u64
    }
}

/// Password verifier length.
pub const VERIFIER_LEN: usize = 2;
/// Authentication code length.
pub const MAC_LEN: usize = 10;
const ITERATIONS: NonZeroU32 = NonZeroU32::new(1000).expect("1000 is not zero");

/// Keystream bytes made per call into AWS-LC: 256 counter blocks, enough
/// that the call's fixed cost is small beside the AES rounds.
const BATCH: usize = 4096;

/// AES in CTR mode with WinZip's counter: a 16-byte little-endian number
/// that starts at 1. The keystream is AES-ECB of the counter blocks (what
/// CTR mode is), made [`BATCH`] bytes at a time.
struct CtrLe {
    ecb: StreamingEncryptingKey,
    /// The counter of the next block to make.
    next: u128,
    keystream: Box<[u8; BATCH]>,
    /// Bytes of `keystream` already used.
    used: usize,
}

impl CtrLe {
    fn new(strength: AesStrength, key: &[u8]) -> CtrLe {
        let algorithm = match strength {
            AesStrength::Aes128 => &AES_128,
            AesStrength::Aes192 => &AES_192,
            AesStrength::Aes256 => &AES_256,
        };
        let key = UnboundCipherKey::new(algorithm, key).expect("key length matches the strength");
        // Padding only matters at `finish`, which is never called: every
        // update is whole blocks, so no byte is held back.
        let ecb = StreamingEncryptingKey::ecb_pkcs7(key).expect("AES-ECB is available");
        CtrLe {
            ecb,
            next: 1,
            keystream: Box::new([0; BATCH]),
            used: BATCH,
        }
    }

    fn refill(&mut self) {
        let mut counters = [0u8; BATCH];
        for block in counters.chunks_exact_mut(16) {
            block.copy_from_slice(&self.next.to_le_bytes());
            self.next = self.next.wrapping_add(1);
        }
        // Whole blocks in, the same number out: the output buffer is
        // exactly large enough, and the length is far below i32::MAX.
        let made = self
            .ecb
            .less_safe_update(&counters, &mut self.keystream[..])
            .expect("whole blocks into an output of the same size");
        debug_assert_eq!(made.written().len(), BATCH);
        self.used = 0;
    }

    fn apply(&mut self, mut buf: &mut [u8]) {
        while !buf.is_empty() {
            if self.used == BATCH {
                self.refill();
            }
            let n = (BATCH - self.used).min(buf.len());
            let (now, rest) = buf.split_at_mut(n);
            for (b, k) in now
                .iter_mut()
                .zip(&self.keystream[self.used..self.used + n])
            {
                *b ^= k;
            }
            self.used += n;
            buf = rest;
        }
    }
}

/// Keys derived from a password and salt.
struct Keys {
    cipher: CtrLe,
    mac: hmac::Context,
    verifier: [u8; VERIFIER_LEN],
}

fn derive(strength: AesStrength, password: &[u8], salt: &[u8]) -> Keys {
    let k = strength.key_len();
    let mut material = [0u8; 32 * 2 + VERIFIER_LEN];
    let material = &mut material[..2 * k + VERIFIER_LEN];
    // 66 bytes at most, far below PBKDF2-HMAC-SHA1's output limit, so this
    // cannot fail.
    pbkdf2::derive(
        pbkdf2::PBKDF2_HMAC_SHA1,
        ITERATIONS,
        salt,
        password,
        material,
    );
    let cipher = CtrLe::new(strength, &material[..k]);
    let mac = hmac::Context::with_key(&hmac::Key::new(
        hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
        &material[k..2 * k],
    ));
    let verifier = [material[2 * k], material[2 * k + 1]];
    Keys {
        cipher,
        mac,
        verifier,
    }
}

/// Encrypts one entry's compressed bytes.
pub(crate) struct AesEncryptor {
    keys: Keys,
    header: Vec<u8>,
}

impl AesEncryptor {
    /// Derives keys from `password` and `salt` (which must be `salt_len` bytes).
    pub(crate) fn new(strength: AesStrength, password: &[u8], salt: &[u8]) -> AesEncryptor {
        let keys = derive(strength, password, salt);
        let mut header = salt.to_vec();
        header.extend_from_slice(&keys.verifier);
        AesEncryptor { keys, header }
    }

    /// The salt and verifier that precede the ciphertext.
    pub(crate) fn header(&self) -> &[u8] {
        &self.header
    }

    /// Encrypts in place and feeds the ciphertext to the HMAC.
    pub(crate) fn encrypt(&mut self, buf: &mut [u8]) {
        self.keys.cipher.apply(buf);
        self.keys.mac.update(buf);
    }

    /// The 10-byte authentication code.
    pub(crate) fn finish(self) -> [u8; MAC_LEN] {
        let full = self.keys.mac.sign();
        let mut code = [0u8; MAC_LEN];
        code.copy_from_slice(&full.as_ref()[..MAC_LEN]);
        code
    }
}

/// Decrypts one entry's ciphertext, authenticating it as it goes.
pub(crate) struct AesDecryptor {
    keys: Keys,
}

impl AesDecryptor {
    /// Checks the password against the stored verifier; `None` means wrong password.
    pub(crate) fn new(
        strength: AesStrength,
        password: &[u8],
        salt: &[u8],
        verifier: &[u8],
    ) -> Option<AesDecryptor> {
        let keys = derive(strength, password, salt);
        (keys.verifier[..] == verifier[..]).then_some(AesDecryptor { keys })
    }

    /// Authenticates then decrypts in place.
    pub(crate) fn decrypt(&mut self, buf: &mut [u8]) {
        self.keys.mac.update(buf);
        self.keys.cipher.apply(buf);
    }

    /// Feeds ciphertext to the HMAC without decrypting (authentication pre-pass).
    pub(crate) fn authenticate(&mut self, buf: &[u8]) {
        self.keys.mac.update(buf);
    }

    /// Compares the computed code with the stored one in constant time.
    pub(crate) fn verify(self, stored: &[u8]) -> bool {
        let full = self.keys.mac.sign();
        stored.len() == MAC_LEN
            && full.as_ref()[..MAC_LEN]
                .iter()
                .zip(stored)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// PKWARE's traditional encryption ("ZipCrypto"), read only: Info-ZIP's
/// `zip -P` writes it, and archives made with it are common, but it is
/// broken (known-plaintext attacks recover the keys), so nothing here
/// writes it. No maintained crate offers it on its own: three 32-bit keys
/// stepped by CRC-32 and a linear congruence, as APPNOTE 6.1 describes.
pub(crate) struct ZipCrypto {
    keys: [u32; 3],
}

/// The encryption header before every ZipCrypto entry's data.
pub(crate) const ZIP_CRYPTO_HEADER: usize = 12;

/// CRC-32's table (the reflected polynomial 0xEDB88320), which the key
/// schedule steps one byte at a time without CRC-32's final inversion.
const CRC_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

fn crc_step(crc: u32, b: u8) -> u32 {
    CRC_TABLE[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8)
}

impl ZipCrypto {
    /// The keys after `password`.
    pub(crate) fn new(password: &[u8]) -> ZipCrypto {
        let mut z = ZipCrypto {
            keys: [0x1234_5678, 0x2345_6789, 0x3456_7890],
        };
        for &b in password {
            z.update(b);
        }
        z
    }

    fn update(&mut self, plain: u8) {
        let [k0, k1, k2] = &mut self.keys;
        *k0 = crc_step(*k0, plain);
        *k1 = k1
            .wrapping_add(*k0 & 0xff)
            .wrapping_mul(134_775_813)
            .wrapping_add(1);
        *k2 = crc_step(*k2, (*k1 >> 24) as u8);
    }

    /// Decrypts in place.
    pub(crate) fn decrypt(&mut self, buf: &mut [u8]) {
        for b in buf {
            let t = (self.keys[2] | 2) & 0xffff;
            let plain = *b ^ ((t.wrapping_mul(t ^ 1) >> 8) as u8);
            self.update(plain);
            *b = plain;
        }
    }
}

/// Fills `buf` with random salt bytes from the OS.
pub(crate) fn random_salt(buf: &mut [u8]) -> std::io::Result<()> {
    getrandom::fill(buf).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pbkdf2_matches_rfc6070_vector() {
        // RFC 6070 test vector 2: P="password", S="salt", c=2, dkLen=20.
        let mut out = [0u8; 20];
        let two = NonZeroU32::new(2).unwrap();
        pbkdf2::derive(
            pbkdf2::PBKDF2_HMAC_SHA1,
            two,
            b"salt",
            b"password",
            &mut out,
        );
        assert_eq!(
            out,
            [
                0xea, 0x6c, 0x01, 0x4d, 0xc7, 0x2d, 0x6f, 0x8c, 0xcd, 0x1e, 0xd9, 0x2a, 0xce, 0x1d,
                0x41, 0xf0, 0xd8, 0xde, 0x89, 0x57
            ]
        );
    }

    /// The keys and the authentication code agree with the RustCrypto
    /// crates (an implementation independent of aws-lc), for every
    /// strength, salt length and a message split at odd places.
    #[test]
    fn keys_and_mac_agree_with_rustcrypto() {
        use ::hmac::{Hmac, KeyInit as _, Mac as _};
        for s in [
            AesStrength::Aes128,
            AesStrength::Aes192,
            AesStrength::Aes256,
        ] {
            let salt: Vec<u8> = (0..s.salt_len() as u8)
                .map(|i| i.wrapping_mul(37) ^ 0x5a)
                .collect();
            let password = b"correct horse battery staple";
            let k = s.key_len();
            let mut material = vec![0u8; 2 * k + VERIFIER_LEN];
            ::pbkdf2::pbkdf2_hmac::<::sha1::Sha1>(password, &salt, 1000, &mut material);

            let mut e = AesEncryptor::new(s, password, &salt);
            assert_eq!(e.header(), [&salt[..], &material[2 * k..]].concat());
            let plain: Vec<u8> = (0..100_003u32).map(|i| (i * 7 % 251) as u8).collect();
            let mut ct = plain.clone();
            for chunk in ct.chunks_mut(4093) {
                e.encrypt(chunk);
            }
            let code = e.finish();

            let mut mac = Hmac::<::sha1::Sha1>::new_from_slice(&material[k..2 * k]).unwrap();
            mac.update(&ct);
            assert_eq!(code[..], mac.finalize().into_bytes()[..MAC_LEN]);
            assert_ne!(ct, plain);
        }
    }

    /// A password from the archive's user may be empty; deriving keys from
    /// it must work (and must agree with the RustCrypto oracle).
    #[test]
    fn empty_password_derives_keys() {
        let salt = [9u8; 16];
        let e = AesEncryptor::new(AesStrength::Aes256, b"", &salt);
        let mut material = [0u8; 2 * 32 + VERIFIER_LEN];
        ::pbkdf2::pbkdf2_hmac::<::sha1::Sha1>(b"", &salt, 1000, &mut material);
        assert_eq!(e.header()[16..], material[64..]);
        assert!(AesDecryptor::new(AesStrength::Aes256, b"", &salt, &material[64..]).is_some());
    }

    /// The keystream agrees with RustCrypto's little-endian CTR mode (an
    /// AES independent of AWS-LC) for every strength, over more than one
    /// batch and past a carry out of the counter's first byte, whatever the
    /// split of the input.
    #[test]
    fn ctr_counter_is_little_endian_from_one() {
        use ::aes::cipher::{KeyIvInit as _, StreamCipher as _};
        use ::ctr::Ctr128LE;
        let mut iv = [0u8; 16];
        iv[0] = 1;
        let plain: Vec<u8> = (0..3 * BATCH as u32 + 777)
            .map(|i| (i * 13 % 256) as u8)
            .collect();
        for s in [
            AesStrength::Aes128,
            AesStrength::Aes192,
            AesStrength::Aes256,
        ] {
            let key: Vec<u8> = (0..s.key_len() as u8).map(|i| i ^ 0xa5).collect();
            let mut want = plain.clone();
            match s {
                AesStrength::Aes128 => Ctr128LE::<::aes::Aes128>::new_from_slices(&key, &iv)
                    .unwrap()
                    .apply_keystream(&mut want),
                AesStrength::Aes192 => Ctr128LE::<::aes::Aes192>::new_from_slices(&key, &iv)
                    .unwrap()
                    .apply_keystream(&mut want),
                AesStrength::Aes256 => Ctr128LE::<::aes::Aes256>::new_from_slices(&key, &iv)
                    .unwrap()
                    .apply_keystream(&mut want),
            }
            for step in [1, 15, 16, 17, 4095, 4096, 5000] {
                let mut got = plain.clone();
                let mut c = CtrLe::new(s, &key);
                for chunk in got.chunks_mut(step) {
                    c.apply(chunk);
                }
                assert!(got == want, "{s:?}, chunks of {step}");
            }
        }
    }

    #[test]
    fn encrypt_then_decrypt_and_tamper() {
        for s in [
            AesStrength::Aes128,
            AesStrength::Aes192,
            AesStrength::Aes256,
        ] {
            let salt = vec![3u8; s.salt_len()];
            let mut e = AesEncryptor::new(s, b"pw", &salt);
            let mut data = b"hello world, hello aes".to_vec();
            e.encrypt(&mut data);
            let ver = e.header()[s.salt_len()..].to_vec();
            let mac = e.finish();
            assert!(AesDecryptor::new(s, b"wrong", &salt, &ver).is_none());
            let mut d = AesDecryptor::new(s, b"pw", &salt, &ver).unwrap();
            let mut ct = data.clone();
            d.decrypt(&mut ct);
            assert_eq!(ct, b"hello world, hello aes");
            assert!(d.verify(&mac));
            let mut d = AesDecryptor::new(s, b"pw", &salt, &ver).unwrap();
            data[0] ^= 1;
            d.decrypt(&mut data);
            assert!(!d.verify(&mac));
        }
    }
}
