//! Fuzz bodies, kept in the library so `cargo test` runs them over a seed set
//! and `cargo fuzz` (crates/zipstream/fuzz) runs them over random inputs.
//! They must never panic, whatever the bytes; errors are fine.

use std::io::{Cursor, Read};

use crate::{ZipArchive, ZipStreamReader};

/// Caps the output decoded per input so a bomb-shaped input stays fast.
const MAX_OUT: u64 = 8 << 20;

/// Opens `data` with the random-access reader and reads every entry, with
/// and without a password.
pub fn random_access(data: &[u8]) {
    let Ok(mut a) = ZipArchive::new(Cursor::new(data)) else {
        return;
    };
    let n = a.entries().len().min(64);
    let mut buf = vec![0u8; 16 * 1024];
    for i in 0..n {
        for pw in [None, Some(&b"password"[..])] {
            if let Ok(mut r) = a.open(i, pw) {
                r.limit(MAX_OUT);
                while let Ok(k) = r.read_data(&mut buf) {
                    if k == 0 {
                        break;
                    }
                }
            }
        }
    }
}

/// Walks `data` with the streaming reader, reading every entry.
pub fn streaming(data: &[u8]) {
    let mut r = ZipStreamReader::new(data);
    r.set_password(Some(b"password"));
    let mut buf = vec![0u8; 16 * 1024];
    for _ in 0..64 {
        match r.next_entry() {
            Ok(Some(_)) => {
                r.limit_current(MAX_OUT);
                while let Ok(k) = r.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                }
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AesStrength, EntryOptions, Method, ZipWriter};

    fn seeds() -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        for seekable in [false, true] {
            let text: Vec<u8> = (0..100_000u32)
                .map(|i| b"abcde\n"[(i % 6) as usize])
                .collect();
            let entries = |w: &mut dyn FnMut(EntryOptions, &[u8])| {
                w(EntryOptions::file("a.txt"), &text);
                w(EntryOptions::file("s").method(Method::Stored), b"stored");
                w(
                    EntryOptions::file("e").encrypt(AesStrength::Aes128, "password"),
                    &text,
                );
            };
            if seekable {
                let mut w = ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap();
                entries(&mut |o, d| w.add_bytes(o, d).unwrap());
                v.push(w.finish().unwrap().into_inner());
            } else {
                let mut w = ZipWriter::new(Vec::new());
                entries(&mut |o, d| w.add_bytes(o, d).unwrap());
                v.push(w.finish().unwrap());
            }
        }
        let mut w = ZipWriter::new(Vec::new());
        let text: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
        w.add_bytes(EntryOptions::file("big"), &text).unwrap();
        w.add_bytes(
            EntryOptions::file("enc")
                .encrypt(AesStrength::Aes256, "password")
                .method(Method::Stored),
            &text,
        )
        .unwrap();
        v.push(w.finish().unwrap());
        v
    }

    /// Every seed, plus deterministic single-byte corruptions and truncations
    /// of each, goes through both fuzz bodies without a panic.
    #[test]
    fn fuzz_bodies_survive_mutated_seeds() {
        for s in seeds() {
            random_access(&s);
            streaming(&s);
            let step = (s.len() / 97).max(1);
            for i in (0..s.len()).step_by(step) {
                let mut m = s.clone();
                m[i] ^= 0x5a;
                random_access(&m);
                streaming(&m);
                random_access(&s[..i]);
                streaming(&s[..i]);
            }
        }
    }
}
