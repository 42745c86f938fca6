//! The sans-I/O entry data machine: AES or ZipCrypto header, (decrypt →)
//! decode → CRC and size checks, MAC and data descriptor. It pulls bytes
//! from an [`InBuf`] and says `NeedInput` when it has to wait, so sync and
//! async readers share it.

use crc32fast::Hasher;
use memchr::memmem;

use super::InBuf;
use crate::codec::Decoder;
use crate::crypto::{AesDecryptor, MAC_LEN, VERIFIER_LEN, ZIP_CRYPTO_HEADER, ZipCrypto};
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::format::*;

/// What one step achieved.
pub(crate) enum Progress {
    /// Bytes written to the output slice.
    Data(usize),
    /// The buffer must be refilled before progress can be made.
    NeedInput,
    /// The entry is complete and verified.
    Done,
}

/// How the end of the compressed data is found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Bound {
    /// This many compressed bytes remain (excluding the AES header and MAC).
    Known(u64),
    /// The decoder marks the end (deflate with a data descriptor).
    Terminated,
    /// Search for the data descriptor whose size field matches (stored or AES
    /// entries with a data descriptor, on a stream).
    Scan,
}

#[derive(PartialEq, Eq)]
enum Phase {
    AesHeader,
    /// ZipCrypto's 12-byte header, whose last byte checks the password.
    CryptoHeader,
    Body,
    Mac,
    Descriptor,
    Done,
    /// An error was returned; every later call repeats it, so a caller that
    /// retries never sees a clean end of data.
    Failed(String),
}

/// Decoding state for one entry.
pub(crate) struct DataState {
    name: String,
    phase: Phase,
    bound: Bound,
    decoder: Decoder,
    aes: Option<(crate::crypto::AesStrength, Vec<u8>)>,
    /// ZipCrypto: the password and the byte its header must end with
    /// (a second byte that may stand for it, see `check_bytes`).
    legacy: Option<(Vec<u8>, [u8; 2])>,
    decryptor: Option<Cipher>,
    plain_ahead: usize,
    crc: Hasher,
    check_crc: bool,
    expect_crc: u32,
    expect_size: Option<u64>,
    expect_csize: Option<u64>,
    descriptor: bool,
    zip64_descriptor: bool,
    read_in: u64,
    produced: u64,
    /// Stop with `Limit` once the output passes this many bytes.
    pub max_output: u64,
}

/// Whether the entry's sizes are trustworthy before its data is read.
pub(crate) struct Plan<'a> {
    pub entry: &'a Entry,
    /// Sizes from the central directory (random access) — always usable.
    pub sizes_known: bool,
    /// The local header had a ZIP64 extra field.
    pub local_zip64: bool,
    pub password: Option<&'a [u8]>,
    /// A deflate state from an earlier entry, to reuse.
    pub spare_inflater: Option<Box<flate2::Decompress>>,
}

impl DataState {
    pub(crate) fn new(plan: Plan<'_>) -> Result<DataState> {
        let e = plan.entry;
        let name = e.name.clone();
        if e.encrypted && e.aes.is_none() && e.flags & FLAG_STRONG != 0 {
            return Err(Error::Unsupported {
                name,
                what: "encryption (PKWARE strong encryption)",
                id: 1,
            });
        }
        let decoder = Decoder::for_method(e.method, plan.spare_inflater).ok_or_else(|| {
            Error::Unsupported {
                name: name.clone(),
                what: "compression method",
                id: u32::from(e.method),
            }
        })?;
        let aes = match e.aes {
            None => None,
            Some((strength, _)) => {
                let pw = plan
                    .password
                    .ok_or_else(|| Error::PasswordRequired { name: name.clone() })?;
                Some((strength, pw.to_vec()))
            }
        };
        let legacy = match (e.encrypted, e.aes) {
            (true, None) => {
                let pw = plan
                    .password
                    .ok_or_else(|| Error::PasswordRequired { name: name.clone() })?;
                Some((pw.to_vec(), check_bytes(e, plan.sizes_known)))
            }
            _ => None,
        };
        let descriptor = e.flags & FLAG_DESCRIPTOR != 0 && !plan.sizes_known;
        let overhead = match (e.aes, &legacy) {
            (Some((s, _)), _) => s.overhead(),
            (None, Some(_)) => ZIP_CRYPTO_HEADER as u64,
            (None, None) => 0,
        };
        let bound = if !descriptor || (plan.sizes_known) {
            let c = e
                .compressed_size
                .checked_sub(overhead)
                .ok_or_else(|| Error::Malformed {
                    offset: e.header_offset,
                    what: format!(
                        "entry {name:?}: compressed size {} is smaller than the encryption \
                         overhead",
                        e.compressed_size
                    ),
                })?;
            Bound::Known(c)
        } else if decoder.self_terminating() && aes.is_none() && legacy.is_none() {
            // (Decrypted in place, the bytes after the data must not be
            // touched: an encrypted entry scans for its descriptor.)
            Bound::Terminated
        } else {
            Bound::Scan
        };
        // AE-2 carries no CRC; AE-1 does.
        let check_crc = !matches!(e.aes, Some((_, 2)));
        Ok(DataState {
            name,
            phase: if aes.is_some() {
                Phase::AesHeader
            } else if legacy.is_some() {
                Phase::CryptoHeader
            } else {
                Phase::Body
            },
            bound,
            decoder,
            aes,
            legacy,
            decryptor: None,
            plain_ahead: 0,
            crc: Hasher::new(),
            check_crc,
            expect_crc: e.crc32,
            expect_size: (!descriptor).then_some(e.size),
            expect_csize: (!descriptor).then_some(e.compressed_size),
            descriptor,
            zip64_descriptor: plan.local_zip64,
            read_in: 0,
            produced: 0,
            max_output: u64::MAX,
        })
    }

    /// The deflate state, for the next entry (this one decodes no more).
    pub(crate) fn take_inflater(&mut self) -> Option<Box<flate2::Decompress>> {
        std::mem::replace(&mut self.decoder, Decoder::Store).into_inflater()
    }

    /// Bytes produced so far.
    pub(crate) fn produced(&self) -> u64 {
        self.produced
    }

    /// Compressed bytes consumed so far.
    pub(crate) fn consumed(&self) -> u64 {
        self.read_in
    }

    fn truncated(&self, inb: &InBuf) -> Error {
        Error::Truncated {
            offset: inb.offset + inb.len() as u64,
        }
    }

    /// Makes progress; `out` must not be empty.
    pub(crate) fn step(&mut self, inb: &mut InBuf, out: &mut [u8]) -> Result<Progress> {
        if let Phase::Failed(msg) = &self.phase {
            return Err(Error::Corrupt {
                name: self.name.clone(),
                detail: format!("entry already failed: {msg}"),
            });
        }
        let r = self.step_inner(inb, out);
        if let Err(e) = &r {
            self.phase = Phase::Failed(e.to_string());
        }
        r
    }

    fn step_inner(&mut self, inb: &mut InBuf, out: &mut [u8]) -> Result<Progress> {
        loop {
            match &self.phase {
                Phase::Failed(_) => unreachable!("checked in step"),
                Phase::Done => return Ok(Progress::Done),
                Phase::AesHeader => {
                    let (strength, pw) = self.aes.as_ref().expect("AES phase implies AES");
                    let n = strength.salt_len() + VERIFIER_LEN;
                    if inb.len() < n {
                        return self.need(inb);
                    }
                    let h = &inb.data()[..n];
                    let (salt, ver) = h.split_at(strength.salt_len());
                    let d = AesDecryptor::new(*strength, pw, salt, ver).ok_or_else(|| {
                        Error::WrongPassword {
                            name: self.name.clone(),
                        }
                    })?;
                    self.decryptor = Some(Cipher::Aes(Box::new(d)));
                    inb.consume(n);
                    self.read_in += n as u64;
                    self.phase = Phase::Body;
                }
                Phase::CryptoHeader => {
                    if inb.len() < ZIP_CRYPTO_HEADER {
                        return self.need(inb);
                    }
                    let (pw, check) = self
                        .legacy
                        .as_ref()
                        .expect("header phase implies ZipCrypto");
                    let mut z = ZipCrypto::new(pw);
                    let mut header = [0u8; ZIP_CRYPTO_HEADER];
                    header.copy_from_slice(&inb.data()[..ZIP_CRYPTO_HEADER]);
                    z.decrypt(&mut header);
                    if !check.contains(&header[ZIP_CRYPTO_HEADER - 1]) {
                        return Err(Error::WrongPassword {
                            name: self.name.clone(),
                        });
                    }
                    self.decryptor = Some(Cipher::Zip(z));
                    inb.consume(ZIP_CRYPTO_HEADER);
                    self.read_in += ZIP_CRYPTO_HEADER as u64;
                    self.phase = Phase::Body;
                }
                Phase::Body => return self.body(inb, out),
                Phase::Mac => {
                    if inb.len() < MAC_LEN {
                        return self.need(inb);
                    }
                    let Some(Cipher::Aes(d)) = self.decryptor.take() else {
                        unreachable!("MAC phase implies AES");
                    };
                    if !d.verify(&inb.data()[..MAC_LEN]) {
                        return Err(Error::AuthFailed {
                            name: self.name.clone(),
                        });
                    }
                    inb.consume(MAC_LEN);
                    self.read_in += MAC_LEN as u64;
                    self.phase = if self.descriptor {
                        Phase::Descriptor
                    } else {
                        Phase::Done
                    };
                    if self.phase == Phase::Done {
                        self.verify()?;
                    }
                }
                Phase::Descriptor => {
                    let long = if self.zip64_descriptor { 24 } else { 16 };
                    if inb.len() < long && !inb.eof {
                        return self.need(inb);
                    }
                    let d = inb.data();
                    let sig = d.len() >= 4 && le32(d, 0) == DESCRIPTOR_SIG;
                    let at = if sig { 4 } else { 0 };
                    let need = at + if self.zip64_descriptor { 20 } else { 12 };
                    if d.len() < need {
                        return Err(self.truncated(inb));
                    }
                    let crc = le32(d, at);
                    let (c, u) = if self.zip64_descriptor {
                        (le64(d, at + 4), le64(d, at + 12))
                    } else {
                        (u64::from(le32(d, at + 4)), u64::from(le32(d, at + 8)))
                    };
                    inb.consume(need);
                    self.expect_crc = crc;
                    self.expect_size = Some(u);
                    self.expect_csize = Some(c);
                    self.phase = Phase::Done;
                    self.verify()?;
                }
            }
        }
    }

    fn need(&self, inb: &InBuf) -> Result<Progress> {
        if inb.eof {
            Err(self.truncated(inb))
        } else {
            Ok(Progress::NeedInput)
        }
    }

    fn body(&mut self, inb: &mut InBuf, out: &mut [u8]) -> Result<Progress> {
        let mac = match self.decryptor {
            Some(Cipher::Aes(_)) => MAC_LEN,
            _ => 0,
        };
        let avail = match self.bound {
            Bound::Known(rem) => (inb.len() as u64).min(rem) as usize,
            Bound::Terminated => inb.len(),
            Bound::Scan => {
                if let Some((pos, zip64)) = self.find_descriptor(inb.data(), mac) {
                    self.bound = Bound::Known((pos - mac) as u64);
                    self.zip64_descriptor = zip64;
                    (pos - mac).min(inb.len())
                } else {
                    inb.len().saturating_sub(23 + mac)
                }
            }
        };
        let finished_known = matches!(self.bound, Bound::Known(0));
        if avail == 0 && !finished_known {
            return self.need(inb);
        }
        if let Some(d) = self.decryptor.as_mut()
            && avail > self.plain_ahead
        {
            d.decrypt(&mut inb.buf[inb.start + self.plain_ahead..inb.start + avail]);
            self.plain_ahead = avail;
        }
        let step = if finished_known && !self.decoder.self_terminating() {
            crate::codec::Step {
                consumed: 0,
                produced: 0,
                done: true,
            }
        } else {
            self.decoder
                .step(&inb.data()[..avail], out)
                .map_err(|e| e.in_entry(self.name.clone()))?
        };
        inb.consume(step.consumed);
        self.plain_ahead -= step.consumed.min(self.plain_ahead);
        self.read_in += step.consumed as u64;
        if let Bound::Known(rem) = &mut self.bound {
            *rem -= step.consumed as u64;
        }
        self.crc.update(&out[..step.produced]);
        self.produced += step.produced as u64;
        if let Some(s) = self.expect_size
            && self.produced > s
        {
            return Err(Error::Size {
                name: self.name.clone(),
                which: "uncompressed",
                expected: s,
                actual: self.produced,
            });
        }
        if self.produced > self.max_output {
            return Err(Error::Limit {
                name: self.name.clone(),
                what: "uncompressed size",
                limit: self.max_output,
                actual: self.produced,
            });
        }
        let stored_end = !self.decoder.self_terminating() && matches!(self.bound, Bound::Known(0));
        if step.done || stored_end {
            if let Bound::Known(rem) = self.bound
                && rem != 0
            {
                return Err(Error::Size {
                    name: self.name.clone(),
                    which: "compressed",
                    expected: self.expect_csize.unwrap_or(0),
                    actual: self.read_in + rem,
                });
            }
            self.phase = if matches!(self.decryptor, Some(Cipher::Aes(_))) {
                Phase::Mac
            } else if self.descriptor {
                Phase::Descriptor
            } else {
                self.verify()?;
                Phase::Done
            };
        }
        if step.produced > 0 {
            return Ok(Progress::Data(step.produced));
        }
        if self.phase != Phase::Body {
            return self.step_inner(inb, out);
        }
        if step.consumed == 0 {
            if let Bound::Known(0) = self.bound {
                return Err(Error::Corrupt {
                    name: self.name.clone(),
                    detail: "compressed data ends before the stream does".into(),
                });
            }
            return self.need(inb);
        }
        Ok(Progress::Data(0))
    }

    /// Finds a data descriptor at a position whose compressed-size field
    /// equals the bytes before it; returns (position, is_zip64).
    fn find_descriptor(&self, d: &[u8], mac: usize) -> Option<(usize, bool)> {
        for pos in memmem::find_iter(d, &DESCRIPTOR_SIG.to_le_bytes()) {
            if pos < mac || pos < self.plain_ahead {
                continue;
            }
            let total = self.read_in + pos as u64;
            if d.len() >= pos + 24 && le64(d, pos + 8) == total {
                return Some((pos, true));
            }
            if d.len() >= pos + 16 && u64::from(le32(d, pos + 8)) == total && !self.zip64_descriptor
            {
                return Some((pos, false));
            }
        }
        None
    }

    fn verify(&mut self) -> Result<()> {
        let name = || self.name.clone();
        if let Some(c) = self.expect_csize {
            let actual = self.read_in;
            let ok = if self.descriptor && !self.zip64_descriptor {
                c == actual & 0xFFFF_FFFF
            } else {
                c == actual
            };
            if !ok {
                return Err(Error::Size {
                    name: name(),
                    which: "compressed",
                    expected: c,
                    actual,
                });
            }
        }
        if let Some(s) = self.expect_size {
            let ok = if self.descriptor && !self.zip64_descriptor {
                s == self.produced & 0xFFFF_FFFF
            } else {
                s == self.produced
            };
            if !ok {
                return Err(Error::Size {
                    name: name(),
                    which: "uncompressed",
                    expected: s,
                    actual: self.produced,
                });
            }
        }
        let actual = self.crc.clone().finalize();
        if self.check_crc && actual != self.expect_crc {
            return Err(Error::Crc {
                name: name(),
                expected: self.expect_crc,
                actual,
            });
        }
        Ok(())
    }
}

/// The key stream an entry's data is decrypted with.
enum Cipher {
    /// WinZip AES, authenticated by a MAC after the data.
    Aes(Box<AesDecryptor>),
    /// PKWARE's traditional encryption, checked only by the CRC.
    Zip(ZipCrypto),
}

impl Cipher {
    fn decrypt(&mut self, buf: &mut [u8]) {
        match self {
            Cipher::Aes(d) => d.decrypt(buf),
            Cipher::Zip(z) => z.decrypt(buf),
        }
    }
}

/// What a ZipCrypto header's last byte may be for the right password:
/// the CRC's high byte, or with a data descriptor (the CRC not known
/// when the header was written) the DOS time's high byte, as Info-ZIP's
/// zip writes and its unzip checks. With the central directory's CRC at
/// hand, either is taken, since writers differ on which they use.
fn check_bytes(e: &Entry, sizes_known: bool) -> [u8; 2] {
    let crc = (e.crc32 >> 24) as u8;
    let time = (e.dos_time >> 8) as u8;
    match (e.flags & FLAG_DESCRIPTOR != 0, sizes_known) {
        (false, _) => [crc, crc],
        (true, true) => [time, crc],
        (true, false) => [time, time],
    }
}
