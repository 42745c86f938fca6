//! An interval log's encoded histograms (HdrHistogram's V2 format, plain
//! or zlib-compressed, in base64), decoded in memory and time bounded by
//! the line they came on and the range they declare.
//!
//! The hdrhistogram crate's own deserializer trusts the encoding's
//! lengths: it allocates the payload length it reads (up to 4 GiB) before
//! reading a byte of it, inflates whatever the zlib stream holds to fill
//! it, and allocates the whole counts array of the declared range (tens of
//! MiB for a highest trackable value of 2^63 − 1 at 5 significant digits).
//! Interval logs come from other machines and other tools, so this reader
//! checks every length against what the line and the declared range can
//! hold before anything is allocated or inflated, never materialises the
//! declared counts array, and streams the payload through a fixed buffer:
//! its memory is that of the line, and its work is proportional to the
//! payload, which is itself capped by the declared range.

use std::io::Read;

use hdrhistogram::Histogram;

/// The V2 encoding's cookie (word size 8 in the low bits, as every
/// HdrHistogram implementation writes it).
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
/// The cookie of a V2 histogram compressed with zlib.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
/// The V2 header after the cookie: payload length, normalizing offset,
/// significant digits (u32 each), lowest and highest value (u64 each) and
/// the integer-to-double ratio (f64).
const V2_HEADER_LEN: usize = 4 + 4 + 4 + 8 + 8 + 8;
/// The longest a count takes in the payload: LEB128 with a 9th byte of 8
/// bits carries any 64-bit value.
const MAX_VARINT_LEN: u64 = 9;
/// How much of an inflated payload is decoded at a time.
const CHUNK: usize = 16 * 1024;

/// Why an encoded histogram was refused. Each says what the encoding
/// claimed and what it was measured against.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HistogramError {
    /// Not standard base64.
    #[error("histogram is not base64")]
    Base64,
    /// The bytes end inside a part of the encoding (the cookie, the
    /// header, the compressed length, the payload, a count), named.
    #[error("histogram is cut short: its bytes end inside its {0}")]
    Truncated(&'static str),
    /// Neither the V2 cookie nor the compressed V2 cookie.
    #[error("histogram cookie {0:#010x} is not HdrHistogram's V2 encoding")]
    Cookie(u32),
    /// A normalizing offset or a double-to-integer ratio, which interval
    /// logs of integer histograms never hold (the crate refuses them too).
    #[error("histogram uses an unsupported feature ({0})")]
    Unsupported(&'static str),
    /// A range no HdrHistogram can be built with.
    #[error(
        "histogram declares an invalid range (lowest {low}, highest {high}, {digits} significant digits)"
    )]
    Range {
        /// Lowest discernible value.
        low: u64,
        /// Highest trackable value.
        high: u64,
        /// Significant digits.
        digits: u32,
    },
    /// A compressed length longer than the line holds.
    #[error("histogram claims {declared} compressed bytes but the line holds {available}")]
    CompressedLength {
        /// What the encoding claimed.
        declared: u64,
        /// What followed the claim.
        available: u64,
    },
    /// A payload length longer than the line holds (uncompressed form).
    #[error("histogram claims {declared} payload bytes but the line holds {available}")]
    PayloadLength {
        /// What the encoding claimed.
        declared: u64,
        /// What followed the claim.
        available: u64,
    },
    /// A payload longer than any encoding of the declared range needs:
    /// the cap on how far a compressed histogram may inflate.
    #[error(
        "histogram claims {declared} payload bytes, more than the {limit} its declared range \
         ({counts} counts) can need; refusing to inflate it"
    )]
    PayloadBeyondRange {
        /// What the encoding claimed.
        declared: u64,
        /// The most the range needs: its counts, 9 bytes each.
        limit: u64,
        /// The length of the declared range's counts array.
        counts: u64,
    },
    /// The zlib stream is damaged.
    #[error("histogram does not inflate: {0}")]
    Inflate(String),
    /// A count lies past the end of the declared range's counts array.
    #[error("histogram has a count at index {index}, past its declared range ({counts} counts)")]
    PastRange {
        /// Where the count would go.
        index: u64,
        /// The length of the declared range's counts array.
        counts: u64,
    },
    /// A count for a value above 2^64 − 1. The crate's layout never maps
    /// an index inside the counts array there, so this is a guard: the
    /// crate itself would compute garbage (or overflow a shift) instead.
    #[error("histogram has a count at index {0}, whose value is past 2^64 - 1")]
    ValuePastU64(u64),
    /// The histogram's counts add up past what a 64-bit count holds.
    #[error("histogram's counts add up past 2^64 - 1 samples")]
    CountOverflow,
}

/// What decoding one histogram cost, for tests that count work instead of
/// timing it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// Payload bytes decoded (after inflating).
    pub payload_bytes: u64,
    /// Nonzero counts recorded.
    pub counts: u64,
}

/// Decodes base64 histograms into a histogram of the caller's, reusing its
/// buffers from one to the next (one interval log line at a time).
#[derive(Debug, Default)]
pub struct Decoder {
    /// The current line's histogram, base64-decoded: never longer than
    /// the line.
    bytes: Vec<u8>,
    /// Inflated payload, decoded a chunk at a time.
    chunk: Vec<u8>,
}

/// The declared range's layout, as HdrHistogram computes it: what an
/// index in its counts array stands for, and how long that array is.
#[derive(Debug, Clone, Copy)]
struct Layout {
    unit_magnitude: u32,
    half_magnitude: u32,
    half_count: u64,
    counts: u64,
}

impl Layout {
    /// The layout of a histogram of `low..=high` at `digits` significant
    /// digits, computed as the hdrhistogram crate (and Java's
    /// HdrHistogram, whose floating-point rounding it follows) does, with
    /// the same validity checks, but without allocating its counts.
    fn new(low: u64, high: u64, digits: u32) -> Result<Layout, HistogramError> {
        let invalid = HistogramError::Range { low, high, digits };
        if !(1..=u64::MAX / 2).contains(&low) || high < 2 * low || digits > 5 {
            return Err(invalid);
        }
        let largest = 2 * 10_u32.pow(digits);
        let unit_magnitude = (low as f64).log2().floor() as u32;
        let count_magnitude = f64::from(largest).log2().ceil() as u32;
        if unit_magnitude + count_magnitude > 63 {
            return Err(invalid);
        }
        let half_magnitude = count_magnitude - 1;
        // Buckets to cover `high`: each doubles the range of the one
        // before, the first covering sub_bucket_count << unit_magnitude.
        let mut untrackable = 1u64 << (count_magnitude + unit_magnitude);
        let mut buckets = 1u64;
        while untrackable <= high {
            if untrackable > u64::MAX / 2 {
                buckets += 1;
                break;
            }
            untrackable <<= 1;
            buckets += 1;
        }
        let half_count = 1u64 << half_magnitude;
        Ok(Layout {
            unit_magnitude,
            half_magnitude,
            half_count,
            counts: (buckets + 1) * half_count,
        })
    }

    /// The value index `index` of the counts array stands for (the lowest
    /// of its equivalent range), as the crate's `value_for`; `None` past
    /// 2^64 − 1, where the crate would return garbage.
    fn value_for(&self, index: u64) -> Option<u64> {
        let mut bucket = (index >> self.half_magnitude) as i64 - 1;
        let mut sub_bucket = (index & (self.half_count - 1)) + self.half_count;
        if bucket < 0 {
            sub_bucket -= self.half_count;
            bucket = 0;
        }
        let shift = bucket as u32 + self.unit_magnitude;
        if shift >= 64 {
            return (sub_bucket == 0).then_some(0);
        }
        u64::try_from(u128::from(sub_bucket) << shift).ok()
    }

    /// The longest payload an encoding of this range can need: every count
    /// in its widest form. Past this, a payload is padding or a bomb.
    fn max_payload(&self) -> u64 {
        self.counts * MAX_VARINT_LEN
    }
}

/// Big-endian fields read from the front of a byte slice.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn take<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], HistogramError> {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(HistogramError::Truncated(what))?;
        self.0 = rest;
        Ok(*head)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, HistogramError> {
        self.take(what).map(u32::from_be_bytes)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, HistogramError> {
        self.take(what).map(u64::from_be_bytes)
    }
}

/// A V2 header, cookie excluded.
struct Header {
    payload_len: u64,
    layout: Layout,
}

impl Header {
    fn parse(bytes: &[u8; V2_HEADER_LEN]) -> Result<Header, HistogramError> {
        let mut f = Fields(bytes);
        let payload_len = u64::from(f.u32("header")?);
        if f.u32("header")? != 0 {
            return Err(HistogramError::Unsupported("normalizing index offset"));
        }
        let digits = f.u32("header")?;
        let low = f.u64("header")?;
        let high = f.u64("header")?;
        if f64::from_bits(f.u64("header")?) != 1.0 {
            return Err(HistogramError::Unsupported(
                "integer to double conversion ratio",
            ));
        }
        Ok(Header {
            payload_len,
            layout: Layout::new(low, high, digits)?,
        })
    }

    /// The payload length, refused when longer than any encoding of the
    /// declared range needs.
    fn payload_len(&self) -> Result<u64, HistogramError> {
        let limit = self.layout.max_payload();
        if self.payload_len > limit {
            return Err(HistogramError::PayloadBeyondRange {
                declared: self.payload_len,
                limit,
                counts: self.layout.counts,
            });
        }
        Ok(self.payload_len)
    }
}

impl Decoder {
    /// A decoder with empty buffers.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Decodes `encoded` (base64, as an interval log line holds it) and
    /// records every count into `into`, which is reset first and must
    /// auto-resize. Memory beyond `into` is the decoded line plus a fixed
    /// chunk; work is proportional to the payload, whose length is checked
    /// against the line (plain form) or the declared range (compressed
    /// form) before a byte of it is read.
    pub fn decode(
        &mut self,
        encoded: &str,
        into: &mut Histogram<u64>,
    ) -> Result<Work, HistogramError> {
        use base64::Engine;
        into.reset();
        self.bytes.clear();
        base64::engine::general_purpose::STANDARD
            .decode_vec(encoded.trim(), &mut self.bytes)
            .map_err(|_| HistogramError::Base64)?;
        let mut f = Fields(&self.bytes);
        match f.u32("cookie")? {
            V2_COOKIE => {
                let header = Header::parse(&f.take("header")?)?;
                let available = f.0.len() as u64;
                if header.payload_len > available {
                    return Err(HistogramError::PayloadLength {
                        declared: header.payload_len,
                        available,
                    });
                }
                let payload = &f.0[..header.payload_len()? as usize];
                decode_payload(&header, payload, &mut self.chunk, into)
            }
            V2_COMPRESSED_COOKIE => {
                let declared = u64::from(f.u32("compressed length")?);
                let available = f.0.len() as u64;
                if declared > available {
                    return Err(HistogramError::CompressedLength {
                        declared,
                        available,
                    });
                }
                let mut inflate = flate2::read::ZlibDecoder::new(&f.0[..declared as usize]);
                let mut cookie = [0u8; 4];
                read_inflated(&mut inflate, &mut cookie, "compressed cookie")?;
                let cookie = u32::from_be_bytes(cookie);
                if cookie != V2_COOKIE {
                    return Err(HistogramError::Cookie(cookie));
                }
                let mut header = [0u8; V2_HEADER_LEN];
                read_inflated(&mut inflate, &mut header, "compressed header")?;
                let header = Header::parse(&header)?;
                // Inflates no further than the payload the header
                // declared, which the range has capped.
                let payload = inflate.take(header.payload_len()?);
                decode_payload(&header, payload, &mut self.chunk, into)
            }
            other => Err(HistogramError::Cookie(other)),
        }
    }
}

/// Fills `buf` from the zlib stream, an error if it ends first.
fn read_inflated(
    inflate: &mut impl Read,
    buf: &mut [u8],
    what: &'static str,
) -> Result<(), HistogramError> {
    inflate.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => HistogramError::Truncated(what),
        _ => HistogramError::Inflate(e.to_string()),
    })
}

/// Decodes exactly `header.payload_len` bytes of `payload`, a chunk at a
/// time: zigzag LEB128 numbers, a count each when zero or more, a run of
/// that many zero counts when negative.
fn decode_payload(
    header: &Header,
    mut payload: impl Read,
    chunk: &mut Vec<u8>,
    into: &mut Histogram<u64>,
) -> Result<Work, HistogramError> {
    chunk.resize(CHUNK, 0);
    let layout = header.layout;
    let mut work = Work::default();
    let mut index: u64 = 0;
    // A number may straddle two chunks: its bytes so far and their count.
    let mut value: u64 = 0;
    let mut shift_bytes: u32 = 0;
    let mut total: u64 = 0;
    let mut remaining = header.payload_len;
    while remaining > 0 {
        let want = remaining.min(CHUNK as u64) as usize;
        let n = match payload.read(&mut chunk[..want]) {
            Ok(0) => return Err(HistogramError::Truncated("payload")),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(HistogramError::Inflate(e.to_string())),
        };
        remaining -= n as u64;
        work.payload_bytes += n as u64;
        for &b in &chunk[..n] {
            // LEB128-64b9B: eight bytes of 7 bits, then a 9th of all 8.
            if shift_bytes < 8 {
                value |= u64::from(b & 0x7f) << (7 * shift_bytes);
                if b & 0x80 != 0 {
                    shift_bytes += 1;
                    continue;
                }
            } else {
                value |= u64::from(b) << 56;
            }
            let number = ((value >> 1) as i64) ^ -((value & 1) as i64);
            value = 0;
            shift_bytes = 0;
            if number < 0 {
                // Zero runs past the end are harmless (the crate skips
                // them too); only a count there is refused below.
                index = index.saturating_add(number.unsigned_abs());
                continue;
            }
            let count = number as u64;
            if count > 0 {
                if index >= layout.counts {
                    return Err(HistogramError::PastRange {
                        index,
                        counts: layout.counts,
                    });
                }
                let v = layout
                    .value_for(index)
                    .ok_or(HistogramError::ValuePastU64(index))?;
                total = total
                    .checked_add(count)
                    .ok_or(HistogramError::CountOverflow)?;
                // Cannot fail: `into` auto-resizes, and no counter can
                // overflow while the total does not.
                into.record_n(v, count)
                    .map_err(|_| HistogramError::ValuePastU64(index))?;
                work.counts += 1;
            }
            index = index.saturating_add(1);
        }
    }
    if shift_bytes != 0 {
        return Err(HistogramError::Truncated("payload, in a count"));
    }
    Ok(work)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};
    use proptest::prelude::*;

    fn auto() -> Histogram<u64> {
        let mut h = Histogram::new(3).unwrap();
        h.auto(true);
        h
    }

    fn base64(bytes: &[u8]) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// `h` serialised by the crate, plain or compressed, in base64.
    fn encode(h: &Histogram<u64>, compressed: bool) -> String {
        let mut buf = Vec::new();
        if compressed {
            V2DeflateSerializer::new().serialize(h, &mut buf).unwrap();
        } else {
            V2Serializer::new().serialize(h, &mut buf).unwrap();
        }
        base64(&buf)
    }

    /// What the crate's own deserializer makes of `encoded`, added into a
    /// histogram like ours: the reference this decoder must agree with.
    fn crate_decode(encoded: &str) -> Histogram<u64> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut &bytes[..])
            .unwrap();
        let mut out = auto();
        out.add(&h).unwrap();
        out
    }

    fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    proptest! {
        /// Histograms of any valid range and precision, plain or
        /// compressed, decode to exactly what the crate's deserializer
        /// gives, bucket by bucket.
        #[test]
        fn agrees_with_the_crates_deserializer(
            low_exp in 0u32..20,
            span_exp in 1u32..40,
            digits in 0u8..=5,
            values in proptest::collection::vec((any::<u64>(), 1u64..1_000), 0..50),
            compressed in any::<bool>(),
        ) {
            let low = 1u64 << low_exp;
            let high = low.saturating_mul(2).saturating_mul(1u64 << span_exp);
            let Ok(mut h) = Histogram::<u64>::new_with_bounds(low, high, digits) else {
                return Ok(());
            };
            for (v, n) in values {
                h.record_n(v % high, n).unwrap();
            }
            let encoded = encode(&h, compressed);
            let mut into = auto();
            Decoder::new().decode(&encoded, &mut into).unwrap();
            prop_assert_eq!(buckets(&into), buckets(&crate_decode(&encoded)));
            prop_assert_eq!(into.len(), h.len());
        }
    }

    /// A plain V2 histogram from parts, for hostile headers.
    fn v2(payload_len: u32, digits: u32, low: u64, high: u64, payload: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(V2_COOKIE.to_be_bytes());
        b.extend(payload_len.to_be_bytes());
        b.extend(0u32.to_be_bytes());
        b.extend(digits.to_be_bytes());
        b.extend(low.to_be_bytes());
        b.extend(high.to_be_bytes());
        b.extend(1.0f64.to_bits().to_be_bytes());
        b.extend(payload);
        b
    }

    /// `inner` compressed with zlib, as the compressed V2 form wraps it.
    fn compressed(inner: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(inner).unwrap();
        let deflated = z.finish().unwrap();
        let mut b = Vec::new();
        b.extend(V2_COMPRESSED_COOKIE.to_be_bytes());
        b.extend((deflated.len() as u32).to_be_bytes());
        b.extend(deflated);
        b
    }

    fn decode(bytes: &[u8]) -> Result<(Work, Histogram<u64>), HistogramError> {
        let mut into = auto();
        let work = Decoder::new().decode(&base64(bytes), &mut into)?;
        Ok((work, into))
    }

    /// A payload length of 0xFFFFFFFF is checked against the line, plain,
    /// and against the range, compressed, before anything is allocated.
    #[test]
    fn lengths_are_checked_before_allocating() {
        let plain = v2(u32::MAX, 3, 1, 1 << 40, &[2]);
        assert_eq!(
            decode(&plain).unwrap_err(),
            HistogramError::PayloadLength {
                declared: u64::from(u32::MAX),
                available: 1
            }
        );
        assert!(matches!(
            decode(&compressed(&plain)).unwrap_err(),
            HistogramError::PayloadBeyondRange {
                declared: 0xFFFF_FFFF,
                ..
            }
        ));
        let mut lying = compressed(&v2(1, 3, 1, 1 << 40, &[2]));
        lying[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(
            decode(&lying).unwrap_err(),
            HistogramError::CompressedLength {
                declared: 0xFFFF_FFFF,
                ..
            }
        ));
    }

    /// A payload that declares just its range's cap inflates that far and
    /// no further, however much more its zlib stream holds.
    #[test]
    fn inflating_stops_at_the_declared_payload() {
        let layout = Layout::new(1, 2, 0).unwrap();
        let cap = layout.max_payload();
        // Zero runs of one, far more of them than the cap.
        let inner = v2(cap as u32, 0, 1, 2, &vec![1u8; 10_000_000]);
        let (work, h) = decode(&compressed(&inner)).unwrap();
        assert_eq!(work.payload_bytes, cap);
        assert_eq!(h.len(), 0);
    }

    /// A range of 1..2^63 - 1 at 5 digits has 6 million counts; decoding
    /// one count of it costs one count's work, not the range's.
    #[test]
    fn a_huge_declared_range_costs_only_its_payload() {
        let layout = Layout::new(1, i64::MAX as u64, 5).unwrap();
        assert!(layout.counts > 6_000_000, "{}", layout.counts);
        let (work, h) = decode(&v2(1, 5, 1, i64::MAX as u64, &[2])).unwrap();
        assert_eq!(
            work,
            Work {
                payload_bytes: 1,
                counts: 1
            }
        );
        assert_eq!(h.len(), 1);
    }

    /// Counts whose sum passes 2^64 - 1 are an error, not a saturated total.
    #[test]
    fn counts_past_u64_are_an_error() {
        // i64::MAX as a zigzag LEB128 number: 2^64 - 2, nine bytes.
        let mut big = vec![0xfe];
        big.extend([0xff; 8]);
        let payload = [big.clone(), big.clone(), big].concat();
        let bytes = v2(payload.len() as u32, 3, 1, 1 << 20, &payload);
        assert_eq!(decode(&bytes).unwrap_err(), HistogramError::CountOverflow);
    }

    /// A count past the declared counts array, or for a value above
    /// 2^64 - 1, is refused.
    #[test]
    fn counts_outside_the_range_are_refused() {
        let layout = Layout::new(1, 2, 0).unwrap();
        // Skip the whole array, then count one.
        let skip = (layout.counts << 1) - 1;
        let bytes = v2(2, 0, 1, 2, &[skip as u8, 2]);
        assert!(matches!(
            decode(&bytes).unwrap_err(),
            HistogramError::PastRange { .. }
        ));
        // The widest range's last index still stands for a value below
        // 2^64, at every precision (the reader checks it all the same).
        for digits in 0..=5 {
            let top = Layout::new(1, u64::MAX, digits).unwrap();
            assert!(top.value_for(top.counts - 1).is_some(), "{digits} digits");
        }
    }
}
