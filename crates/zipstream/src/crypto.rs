//! WinZip AES encryption (AE-1/AE-2) exactly as the WinZip specification
//! describes it: PBKDF2-HMAC-SHA1 with 1,000 iterations derives the AES key,
//! the HMAC key and a 2-byte password verifier from the password and a random
//! salt; data is encrypted with AES in CTR mode using a 16-byte little-endian
//! counter that starts at 1; the authentication code is the first 10 bytes of
//! HMAC-SHA1 over the *ciphertext*.

use aes::cipher::{KeyIvInit, StreamCipher};
use hmac::{Hmac, KeyInit, Mac};
use sha1::Sha1;

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
const ITERATIONS: u32 = 1000;

type Ctr<C> = ctr::Ctr128LE<C>;

enum Cipher {
    A128(Ctr<aes::Aes128>),
    A192(Ctr<aes::Aes192>),
    A256(Ctr<aes::Aes256>),
}

impl Cipher {
    fn apply(&mut self, buf: &mut [u8]) {
        match self {
            Cipher::A128(c) => c.apply_keystream(buf),
            Cipher::A192(c) => c.apply_keystream(buf),
            Cipher::A256(c) => c.apply_keystream(buf),
        }
    }
}

/// Keys derived from a password and salt.
struct Keys {
    cipher: Cipher,
    mac: Hmac<Sha1>,
    verifier: [u8; VERIFIER_LEN],
}

fn derive(strength: AesStrength, password: &[u8], salt: &[u8]) -> Keys {
    let k = strength.key_len();
    let mut material = [0u8; 32 * 2 + VERIFIER_LEN];
    let material = &mut material[..2 * k + VERIFIER_LEN];
    pbkdf2::pbkdf2_hmac::<Sha1>(password, salt, ITERATIONS, material);
    // The counter block: little-endian value 1 in the first bytes, zeros after.
    let mut iv = [0u8; 16];
    iv[0] = 1;
    let key = &material[..k];
    let cipher = match strength {
        AesStrength::Aes128 => {
            Cipher::A128(Ctr::new_from_slices(key, &iv).expect("key length matches"))
        }
        AesStrength::Aes192 => {
            Cipher::A192(Ctr::new_from_slices(key, &iv).expect("key length matches"))
        }
        AesStrength::Aes256 => {
            Cipher::A256(Ctr::new_from_slices(key, &iv).expect("key length matches"))
        }
    };
    let mac = <Hmac<Sha1> as KeyInit>::new_from_slice(&material[k..2 * k])
        .expect("HMAC takes any key length");
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
        let full = self.keys.mac.finalize().into_bytes();
        let mut code = [0u8; MAC_LEN];
        code.copy_from_slice(&full[..MAC_LEN]);
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
        let full = self.keys.mac.finalize().into_bytes();
        stored.len() == MAC_LEN
            && full[..MAC_LEN]
                .iter()
                .zip(stored)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
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
        pbkdf2::pbkdf2_hmac::<Sha1>(b"password", b"salt", 2, &mut out);
        assert_eq!(
            out,
            [
                0xea, 0x6c, 0x01, 0x4d, 0xc7, 0x2d, 0x6f, 0x8c, 0xcd, 0x1e, 0xd9, 0x2a, 0xce, 0x1d,
                0x41, 0xf0, 0xd8, 0xde, 0x89, 0x57
            ]
        );
    }

    #[test]
    fn ctr_counter_is_little_endian_from_one() {
        // Independent oracle: encrypt the counter blocks 1 and 2 (LE) with raw
        // AES-ECB and XOR, and compare with the CTR output.
        use aes::cipher::{BlockCipherEncrypt, KeyInit as _};
        let key = [7u8; 16];
        let mut ks = Vec::new();
        let ecb = aes::Aes128::new_from_slice(&key).unwrap();
        for ctr in 1u8..=2 {
            let mut block = [0u8; 16];
            block[0] = ctr;
            let mut b = block.into();
            ecb.encrypt_block(&mut b);
            ks.extend_from_slice(&b[..]);
        }
        let mut iv = [0u8; 16];
        iv[0] = 1;
        let mut c = Ctr::<aes::Aes128>::new_from_slices(&key, &iv).unwrap();
        let mut buf = [0u8; 32];
        c.apply_keystream(&mut buf);
        assert_eq!(&buf[..], &ks[..]);
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
