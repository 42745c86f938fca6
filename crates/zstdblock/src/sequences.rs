//! The sequences section of a compressed block: its header, the three
//! tables (predefined, RLE, FSE-compressed or Repeat) and the interleaved
//! FSE bitstream decoded into [`Sequence`]s (RFC 8878 section 3.1.1.3.2).

use std::sync::{Arc, OnceLock};

use crate::bits::BackwardBits;
use crate::error::Fault;
use crate::fse;

/// One sequence as the entropy stage leaves it: `offset` is the
/// *offset value* of RFC 8878 (1 to 3 name a repeat offset, larger values
/// are the distance plus 3) until [`crate::resolve_offsets`] turns it into
/// the distance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sequence {
    /// Literals copied before the match.
    pub literal_length: u32,
    /// Bytes the match copies (at least 3).
    pub match_length: u32,
    /// Offset value before resolution, distance after.
    pub offset: u32,
}

/// One state of a sequence decoding table, with the code's value folded
/// in: the symbol's baseline and extra bits, and the next state's base
/// and bit count.
#[derive(Clone, Copy, Default, Debug)]
struct Cell {
    base: u32,
    next: u16,
    extra: u8,
    bits: u8,
}

const CELLS: usize = 512;

/// A decoding table for literal lengths, match lengths or offsets.
#[derive(Clone)]
pub struct SequenceTable {
    cells: Box<[Cell; CELLS]>,
    log: u32,
}

impl std::fmt::Debug for SequenceTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SequenceTable")
            .field("log", &self.log)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    LiteralLength,
    Offset,
    MatchLength,
}

const LL_BASE: [u32; 36] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64,
    128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];
const LL_EXTRA: [u8; 36] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11,
    12, 13, 14, 15, 16,
];
const ML_BASE: [u32; 53] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
    28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027,
    2051, 4099, 8195, 16387, 32771, 65539,
];
const ML_EXTRA: [u8; 53] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
];
const LL_DEFAULT: [i16; 36] = [
    4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
    -1, -1, -1, -1,
];
const ML_DEFAULT: [i16; 53] = [
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
];
const OF_DEFAULT: [i16; 29] = [
    1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1,
];

impl Kind {
    fn max_symbol(self) -> usize {
        match self {
            Kind::LiteralLength => 35,
            Kind::Offset => 31,
            Kind::MatchLength => 52,
        }
    }

    fn max_log(self) -> u32 {
        match self {
            Kind::LiteralLength | Kind::MatchLength => 9,
            Kind::Offset => 8,
        }
    }

    /// The code's baseline and extra bits.
    fn code(self, symbol: usize) -> (u32, u8) {
        match self {
            Kind::LiteralLength => (LL_BASE[symbol], LL_EXTRA[symbol]),
            Kind::MatchLength => (ML_BASE[symbol], ML_EXTRA[symbol]),
            // Offset value = (1 << code) + `code` bits.
            Kind::Offset => (1 << symbol, symbol as u8),
        }
    }
}

impl SequenceTable {
    fn from_distribution(kind: Kind, dist: &fse::Distribution) -> Self {
        let size = 1usize << dist.log;
        let mut symbols = [0u8; fse::MAX_CELLS];
        let symbols = &mut symbols[..size];
        fse::spread(dist, symbols);
        // Each symbol's code once, not once per cell.
        let mut codes = [(0u32, 0u8); 64];
        for (symbol, code) in codes.iter_mut().enumerate().take(dist.symbols) {
            *code = kind.code(symbol);
        }
        let mut next = fse::NextStates::new(dist);
        let mut cells = Box::new([Cell::default(); CELLS]);
        for (cell, &symbol) in cells.iter_mut().zip(symbols.iter()) {
            let (base, extra) = codes[usize::from(symbol) & 63];
            let (bits, next) = next.take(symbol);
            *cell = Cell {
                base,
                extra,
                next,
                bits,
            };
        }
        SequenceTable {
            cells,
            log: dist.log,
        }
    }

    fn rle(kind: Kind, symbol: usize) -> Self {
        let (base, extra) = kind.code(symbol);
        let mut cells = Box::new([Cell::default(); CELLS]);
        cells[0] = Cell {
            base,
            extra,
            next: 0,
            bits: 0,
        };
        SequenceTable { cells, log: 0 }
    }

    fn predefined(kind: Kind) -> Arc<SequenceTable> {
        static TABLES: OnceLock<[Arc<SequenceTable>; 3]> = OnceLock::new();
        let tables = TABLES.get_or_init(|| {
            let make = |kind: Kind, counts: &[i16], log: u32| {
                let mut dist = fse::Distribution {
                    counts: [0; 256],
                    symbols: counts.len(),
                    log,
                };
                dist.counts[..counts.len()].copy_from_slice(counts);
                Arc::new(SequenceTable::from_distribution(kind, &dist))
            };
            [
                make(Kind::LiteralLength, &LL_DEFAULT, 6),
                make(Kind::Offset, &OF_DEFAULT, 5),
                make(Kind::MatchLength, &ML_DEFAULT, 6),
            ]
        });
        match kind {
            Kind::LiteralLength => tables[0].clone(),
            Kind::Offset => tables[1].clone(),
            Kind::MatchLength => tables[2].clone(),
        }
    }
}

/// A table a block leaves to the next ones of its frame (for Repeat
/// mode): built, or only described, as a state that skips a block leaves
/// it, so that a table is built once, by the thread that decodes with it.
#[derive(Clone, Debug)]
pub(crate) enum Table {
    Built(Arc<SequenceTable>),
    Rle(u8),
    Described(Arc<fse::Distribution>),
}

impl Table {
    /// The table, built now (and kept so) if it was only described.
    fn build(&mut self, kind: Kind) -> Arc<SequenceTable> {
        let built = match self {
            Table::Built(table) => return table.clone(),
            Table::Rle(symbol) => SequenceTable::rle(kind, usize::from(*symbol)),
            Table::Described(dist) => SequenceTable::from_distribution(kind, dist),
        };
        let built = Arc::new(built);
        *self = Table::Built(built.clone());
        built
    }
}

/// The three tables a block may repeat from the previous one.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tables {
    pub literal_length: Option<Table>,
    pub offset: Option<Table>,
    pub match_length: Option<Table>,
}

/// What a sequences section produced. The sums are u64 on every target:
/// a corrupt block's can pass 2^32, and execution trusts them once the
/// entropy stage has compared them with the block's sizes.
pub(crate) struct Decoded {
    /// Sum of the literal lengths.
    pub literals: u64,
    /// Sum of the match lengths.
    pub matches: u64,
    /// Sequences decoded: the first `count` of the buffer given (without
    /// the streams, the count the header declares, none decoded).
    pub count: usize,
}

/// Reads one table description at `data[*at..]` and installs it in
/// `slot`: built if `build`, else only described (see [`Table`]).
fn read_table(
    kind: Kind,
    mode: u8,
    data: &[u8],
    at: &mut usize,
    slot: &mut Option<Table>,
    repeat_allowed: bool,
    build: bool,
) -> Result<(), Fault> {
    match mode {
        0 => *slot = Some(Table::Built(SequenceTable::predefined(kind))),
        1 => {
            let Some(&symbol) = data.get(*at) else {
                return Err(Fault::new(*at, "RLE table past the block"));
            };
            if usize::from(symbol) > kind.max_symbol() {
                return Err(Fault::new(*at, "RLE table symbol out of range"));
            }
            *slot = Some(if build {
                Table::Built(Arc::new(SequenceTable::rle(kind, usize::from(symbol))))
            } else {
                Table::Rle(symbol)
            });
            *at += 1;
        }
        2 => {
            let (dist, used) =
                fse::read_distribution(&data[*at..], kind.max_symbol(), kind.max_log())
                    .map_err(|what| Fault::new(*at, what))?;
            *slot = Some(if build {
                Table::Built(Arc::new(SequenceTable::from_distribution(kind, &dist)))
            } else {
                Table::Described(Arc::new(dist))
            });
            *at += used;
        }
        _ => {
            if !repeat_allowed || slot.is_none() {
                return Err(Fault::new(*at, "Repeat table without a previous table"));
            }
        }
    }
    Ok(())
}

/// Decodes the sequences section `data` (starting at block offset
/// `origin`, for error positions) into the first [`Decoded::count`]
/// entries of `out`, grown to hold them and never shrunk (see
/// [`decode_stream_body`]). Without `streams`, only the header and the
/// tables are read (for a state that skips a block): the count and the
/// sums are 0.
pub(crate) fn decode(
    data: &[u8],
    origin: usize,
    tables: &mut Tables,
    out: &mut Vec<Sequence>,
    streams: bool,
) -> Result<Decoded, Fault> {
    let fault = |at: usize, what| Fault::new(origin + at, what);
    let Some(&b0) = data.first() else {
        return Err(fault(0, "missing sequences section"));
    };
    let (count, mut at) = match b0 {
        0..=127 => (usize::from(b0), 1),
        255 => {
            if data.len() < 3 {
                return Err(fault(0, "sequence count past the block"));
            }
            (
                usize::from(u16::from_le_bytes([data[1], data[2]])) + 0x7F00,
                3,
            )
        }
        _ => {
            let Some(&b1) = data.get(1) else {
                return Err(fault(0, "sequence count past the block"));
            };
            ((usize::from(b0 - 128) << 8) + usize::from(b1), 2)
        }
    };
    if count == 0 {
        if at != data.len() {
            return Err(fault(at, "bytes after an empty sequences section"));
        }
        return Ok(Decoded {
            literals: 0,
            matches: 0,
            count: 0,
        });
    }
    let Some(&modes) = data.get(at) else {
        return Err(fault(at, "missing table modes"));
    };
    if modes & 3 != 0 {
        return Err(fault(at, "reserved bits in the table modes"));
    }
    at += 1;
    // Repeat is allowed once an earlier block of the frame had sequences;
    // then all three tables exist.
    let repeat_allowed = tables.literal_length.is_some();
    let in_block = |f: Fault| Fault::new(origin + f.at, f.what);
    let tables_and_modes = [
        (Kind::LiteralLength, modes >> 6, &mut tables.literal_length),
        (Kind::Offset, (modes >> 4) & 3, &mut tables.offset),
        (
            Kind::MatchLength,
            (modes >> 2) & 3,
            &mut tables.match_length,
        ),
    ];
    for (kind, mode, slot) in tables_and_modes {
        read_table(kind, mode, data, &mut at, slot, repeat_allowed, streams).map_err(in_block)?;
    }
    let (Some(ll), Some(of), Some(ml)) = (
        tables.literal_length.as_mut(),
        tables.offset.as_mut(),
        tables.match_length.as_mut(),
    ) else {
        return Err(fault(at, "missing sequence table"));
    };
    if !streams {
        return Ok(Decoded {
            literals: 0,
            matches: 0,
            count,
        });
    }
    let (ll, of, ml) = (
        ll.build(Kind::LiteralLength),
        of.build(Kind::Offset),
        ml.build(Kind::MatchLength),
    );
    let (ll, of, ml) = (&*ll, &*of, &*ml);
    let Some(bits) = BackwardBits::new(&data[at..]) else {
        return Err(fault(at, "bad sequence bitstream"));
    };
    decode_stream(bits, count, ll, of, ml, out).map_err(|what| fault(at, what))
}

/// The hot loop: `count` sequences from the interleaved bitstream, in its
/// BMI2 copy where the CPU has it (see [`crate::bits::variable_shifts`]).
fn decode_stream(
    bits: BackwardBits<'_>,
    count: usize,
    ll: &SequenceTable,
    of: &SequenceTable,
    ml: &SequenceTable,
    out: &mut Vec<Sequence>,
) -> Result<Decoded, &'static str> {
    #[cfg(target_arch = "x86_64")]
    if crate::bits::variable_shifts() {
        // SAFETY: the CPU has the features the copy is compiled for.
        #[allow(unsafe_code)]
        return unsafe { decode_stream_bmi2(bits, count, ll, of, ml, out) };
    }
    decode_stream_body(bits, count, ll, of, ml, out)
}

/// [`decode_stream_body`] compiled for BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2,lzcnt")]
fn decode_stream_bmi2(
    bits: BackwardBits<'_>,
    count: usize,
    ll: &SequenceTable,
    of: &SequenceTable,
    ml: &SequenceTable,
    out: &mut Vec<Sequence>,
) -> Result<Decoded, &'static str> {
    decode_stream_body(bits, count, ll, of, ml, out)
}

/// [`decode_stream`]'s body. The reader is taken by value so that its
/// fields live in registers.
#[inline(always)]
fn decode_stream_body(
    mut bits: BackwardBits<'_>,
    count: usize,
    ll: &SequenceTable,
    of: &SequenceTable,
    ml: &SequenceTable,
    out: &mut Vec<Sequence>,
) -> Result<Decoded, &'static str> {
    // Grown, never shrunk: a buffer that held a longer block before has
    // the room already, where shrinking it to each block's count made
    // the next longer block write the defaults over its tail first (the
    // loop overwrites them anyway), a pass over up to half a MiB a block
    // that was 1 % of the pipeline's CPU.
    if out.len() < count {
        out.resize(count, Sequence::default());
    }
    let out = &mut out[..count];
    let (ll_cells, of_cells, ml_cells) = (&*ll.cells, &*of.cells, &*ml.cells);
    let mut ll_state = bits.read(ll.log) as usize;
    let mut of_state = bits.read(of.log) as usize;
    let mut ml_state = bits.read(ml.log) as usize;
    let last = count - 1;
    for (i, slot) in out.iter_mut().enumerate() {
        bits.reload();
        let l = ll_cells[ll_state & (CELLS - 1)];
        let o = of_cells[of_state & (CELLS - 1)];
        let m = ml_cells[ml_state & (CELLS - 1)];
        // Offset extra bits (up to 31), then match and literal length
        // bits (up to 16 each); a reload leaves 57 bits, so only long
        // offsets need a second one before the state updates (26 bits).
        let offset = o.base + bits.read(u32::from(o.extra)) as u32;
        let match_length = m.base + bits.read(u32::from(m.extra)) as u32;
        if u32::from(o.extra) + u32::from(m.extra) + u32::from(l.extra) > 31 {
            bits.reload();
        }
        let literal_length = l.base + bits.read(u32::from(l.extra)) as u32;
        *slot = Sequence {
            literal_length,
            match_length,
            offset,
        };
        if i != last {
            ll_state = usize::from(l.next) + bits.read(u32::from(l.bits)) as usize;
            ml_state = usize::from(m.next) + bits.read(u32::from(m.bits)) as usize;
            of_state = usize::from(o.next) + bits.read(u32::from(o.bits)) as usize;
        }
    }
    bits.reload();
    if !bits.finished() {
        return Err("sequence bitstream not consumed exactly");
    }
    // Summed apart from the decode loop, which is short of registers.
    let literals = out.iter().map(|s| u64::from(s.literal_length)).sum::<u64>();
    let matches = out.iter().map(|s| u64::from(s.match_length)).sum::<u64>();
    Ok(Decoded {
        literals,
        matches,
        count,
    })
}
