//! `perfkit betree search`: events streamed in, matching ids streamed out
//! in batches.

use super::*;
use betree::MatchSink;

pub(super) fn search(a: Search) -> Result<ExitCode> {
    refuse_output_over_input(&a.output, &a.input)?;
    let (index, _) = load_index(&a.input)?;
    let mut events = EventReader::open(&a.input, index.schema())?;
    let mut bufs = StreamBuffers::default();
    let mut run = |out: &mut dyn Write| {
        search_stream(&index, &mut events, a.mode, a.budget, &mut bufs, out).map(drop)
    };
    if a.output == Path::new("-") {
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        // An input or search error is reported as it is; a plain I/O
        // error is the write's.
        match run(&mut out) {
            Err(e) if e.downcast_ref::<io::Error>().is_some() => return Err(e.context(STDOUT)),
            other => other?,
        }
        out.flush().context(STDOUT)?;
    } else {
        // An input or search error is reported as it is, not as a failure
        // to write the output (the partial output is removed either way).
        let mut input_err = None;
        let written = write_atomically(&a.output, |f| {
            let mut out = BufWriter::with_capacity(1 << 16, f);
            if let Err(e) = run(&mut out) {
                if e.downcast_ref::<io::Error>().is_none() {
                    input_err = Some(e);
                    bail!("search failed");
                }
                return Err(e);
            }
            Ok(out.flush()?)
        });
        if let Some(e) = input_err {
            return Err(e);
        }
        written.with_context(|| format!("writing {}", a.output.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses an output that is one of the input files (the same file by
/// device and inode, so also through a symlink or a hard link): renaming
/// the finished output over it would replace the user's expression, event
/// or domain file with search results.
pub(super) fn refuse_output_over_input(output: &Path, input: &Input) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if output == Path::new("-") {
        return Ok(());
    }
    let Ok(out) = fs::metadata(output) else {
        return Ok(());
    };
    let inputs = [
        ("expression file", Some(&input.exprs)),
        ("event file", Some(&input.events)),
        ("domain file", input.domains.as_ref()),
    ];
    for (what, path) in inputs {
        let Some(path) = path.filter(|p| p.as_path() != Path::new("-")) else {
            continue;
        };
        if fs::metadata(path).is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino()) {
            bail!(
                "refusing to write {}: it is the {what} {}",
                output.display(),
                path.display()
            );
        }
    }
    Ok(())
}

/// Searches the events in batches of [`SEARCH_BATCH`], writing each
/// batch's lines before reading the next; returns how many ids it wrote.
/// `std` and `batch` both go through `search_batch_by`, which returns what
/// `search` does per event (the benchmark checks it): `std` lets it pick
/// bit-parallel or event by event per chunk (`BatchPath::Auto`), `batch`
/// is always bit-parallel. `betree bench` times this function as the
/// command's own path.
pub(super) fn search_stream(
    index: &Index,
    events: &mut EventReader,
    mode: Mode,
    budget: u64,
    bufs: &mut StreamBuffers,
    out: &mut dyn Write,
) -> Result<u64> {
    let StreamBuffers {
        batch,
        lines,
        scratch,
    } = bufs;
    let mut first = 1usize;
    let pushed = lines.pushed;
    let chunks = match mode {
        Mode::Batch => BatchPath::Lanes,
        _ => BatchPath::Auto,
    };
    loop {
        let mut n = 0;
        while n < SEARCH_BATCH {
            if n == batch.len() {
                batch.push(Event::empty(index.schema()));
            }
            if !events.next_event_into(&mut batch[n])? {
                break;
            }
            n += 1;
        }
        let batch = &batch[..n];
        if batch.is_empty() {
            return Ok(lines.pushed - pushed);
        }
        let path = &events.path;
        let at = |i: usize| format!("{path}: event {}", first + i);
        match mode {
            // The ids are written as text as the search finds them.
            Mode::Std | Mode::Batch => {
                if let Err(e) = index.search_batch_by(batch, lines, chunks) {
                    // Name the event at fault: the batch path checks them
                    // all before it starts, the plain one each on its own.
                    for (i, ev) in batch.iter().enumerate() {
                        index.search(ev).with_context(|| at(i))?;
                    }
                    return Err(e).with_context(|| at(0));
                }
            }
            mode => {
                lines.start(batch.len());
                for (i, ev) in batch.iter().enumerate() {
                    let mut it = index.search_iter_in(ev, scratch).with_context(|| at(i))?;
                    let found = if mode == Mode::All {
                        index.search_all_in(it, scratch)
                    } else {
                        let ids = loop {
                            if let SearchStep::Done(ids) = index.search_next(&mut it, budget) {
                                break ids;
                            }
                        };
                        *scratch = it.into_scratch();
                        ids
                    };
                    lines.push_all(i, &found);
                }
            }
        }
        // Each line is handed over whole: two calls through `dyn Write`
        // per id cost more than the search itself on dense workloads
        // (thousands of ids per event).
        for i in 0..batch.len() {
            out.write_all(lines.finish(i))?;
        }
        first += batch.len();
    }
}

/// What [`search_stream`] keeps from one batch to the next, and a caller
/// streaming again over the same index may keep from one stream to the
/// next (the benchmark does, round after round, as its `search_batch` row
/// keeps its lists).
#[derive(Default)]
pub(super) struct StreamBuffers {
    /// The batch's events, read in place batch after batch: a fresh event
    /// per line (allocated, filled value by value, freed) cost a dense run
    /// about 4 % on top of the search.
    batch: Vec<Event>,
    lines: IdLines,
    /// One scratch for the plain modes: a fresh memo and selection per
    /// event cost more than the search.
    scratch: Scratch,
}

/// A batch's output lines, written as the search finds the ids
/// ([`MatchSink`]): a bit-parallel search finds the ids of 512 events
/// expression by expression, and formatting each event's list once the
/// batch was done waited on reading back lists that had left the cache
/// (10 MB of ids per batch on the dense reference profile, where that
/// formatting was 9 % of the search's samples).
#[derive(Default)]
pub(super) struct IdLines {
    table: IdTable,
    /// Per event of the batch, a space and its text before each id; the
    /// lists are kept (with their capacity) from batch to batch.
    lines: Vec<Vec<u8>>,
    /// Ids pushed since the stream began.
    pushed: u64,
}

impl IdLines {
    /// Ends event `i`'s line, and gives it: its ids separated by spaces,
    /// then a newline. Once per event of a batch.
    fn finish(&mut self, i: usize) -> &[u8] {
        let line = &mut self.lines[i];
        line.push(b'\n');
        // Every id wrote a separating space before it; the first has none.
        &line[usize::from(line.len() > 1)..]
    }
}

impl MatchSink for IdLines {
    fn start(&mut self, events: usize) {
        self.lines.truncate(events);
        for line in &mut self.lines {
            line.clear();
        }
        self.lines.resize_with(events, Vec::new);
    }

    #[inline]
    fn push(&mut self, event: usize, id: u64) {
        self.pushed += 1;
        self.table.put(&mut self.lines[event], id);
    }

    /// One event's ids at once (a search event by event gives them so):
    /// its line is found and grown once, not once per id.
    fn push_all(&mut self, event: usize, ids: &[u64]) {
        self.pushed += ids.len() as u64;
        let line = &mut self.lines[event];
        line.reserve(ids.len() * 8);
        for &id in ids {
            self.table.put(line, id);
        }
    }
}

/// Ids as text fast: ids below [`IdTable::LEN`] (every id of most indexes)
/// are copied from a table of " 1234" texts, eight bytes at a time, instead
/// of being formatted one by one.
#[derive(Default)]
struct IdTable {
    /// Per id, as little-endian bytes: a space, its digits, zero padding,
    /// and in the last byte how many bytes are text (six at most), so one
    /// eight-byte load gives both.
    texts: Vec<u64>,
}

impl IdTable {
    /// Ids with an entry at most: five digits, so space + digits fit.
    const LEN: u64 = 1 << 16;

    /// Appends a space and `id` to `line`.
    #[inline(always)]
    fn put(&mut self, line: &mut Vec<u8>, id: u64) {
        let text = match usize::try_from(id).ok().and_then(|i| self.texts.get(i)) {
            Some(&text) => text,
            None if id < IdTable::LEN => self.grow(id),
            None => {
                line.push(b' ');
                line.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
                return;
            }
        };
        // The whole entry, then back to the end of its text: a fixed
        // eight-byte copy instead of a variable-length one.
        let at = line.len();
        line.extend_from_slice(&text.to_le_bytes());
        line.truncate(at + (text >> 56) as usize);
    }

    /// Grows the table to hold `id` (below [`IdTable::LEN`]) and gives its
    /// entry. The table holds the ids seen so far, rounded up to a power
    /// of two: all 65,536 entries took half a millisecond to make, about
    /// 1 % of a 2,000-event dense search with 5,000 expressions.
    #[cold]
    fn grow(&mut self, id: u64) -> u64 {
        let want = (id + 1).next_power_of_two().min(IdTable::LEN);
        let mut num = itoa::Buffer::new();
        let from = self.texts.len() as u64;
        self.texts.extend((from..want).map(|id| {
            let digits = num.format(id).as_bytes();
            let mut text = [0u8; 8];
            text[0] = b' ';
            text[1..=digits.len()].copy_from_slice(digits);
            text[7] = digits.len() as u8 + 1;
            u64::from_le_bytes(text)
        }));
        self.texts[id as usize]
    }
}

#[cfg(test)]
mod id_lines_tests {
    use super::IdLines;
    use betree::MatchSink;

    /// The oracle: std's formatting, joined.
    fn want(ids: &[u64]) -> String {
        let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
        format!("{}\n", ids.join(" "))
    }

    #[test]
    fn lines_are_the_ids_as_decimal_text() {
        let cases: [&[u64]; 6] = [
            &[],
            &[0],
            &[1, 9, 10, 99, 100, 999, 1000, 9999, 10000],
            &[65534, 65535, 65536, 65537],
            &[u64::MAX, 7, u64::from(u32::MAX) + 1],
            &[42; 3],
        ];
        let mut t = IdLines::default();
        // Twice: the second batch's lines must not keep the first's text.
        for _ in 0..2 {
            t.start(cases.len());
            // Interleaved across events, as a bit-parallel pass gives them.
            for k in 0..10 {
                for (e, ids) in cases.iter().enumerate() {
                    if let Some(&id) = ids.get(k) {
                        t.push(e, id);
                    }
                }
            }
            for (e, ids) in cases.iter().enumerate() {
                assert_eq!(t.finish(e), want(ids).as_bytes(), "{ids:?}");
            }
        }
        let ids: usize = cases.iter().map(|c| c.len()).sum();
        assert_eq!(t.pushed, 2 * ids as u64);
        // A shorter batch after a longer one, and a line grown by many ids
        // past the table after short ones.
        let ids: Vec<u64> = (0..50).chain((0..500).map(|k| u64::MAX - k)).collect();
        t.start(1);
        t.push_all(0, &ids);
        assert_eq!(t.finish(0), want(&ids).as_bytes());
        assert_eq!(t.lines.len(), 1);
    }

    #[test]
    fn the_table_holds_the_ids_seen_and_push_all_is_push_in_turn() {
        let ids: Vec<u64> = (0..100).chain([70_000, 99, 3]).collect();
        let (mut all, mut each) = (IdLines::default(), IdLines::default());
        all.start(1);
        each.start(1);
        all.push_all(0, &ids);
        for &id in &ids {
            each.push(0, id);
        }
        // 0..=99 rounded up to a power of two; 70,000 is past the table.
        assert_eq!(all.table.texts.len(), 128);
        assert_eq!(all.pushed, ids.len() as u64);
        assert_eq!(each.pushed, ids.len() as u64);
        assert_eq!(all.finish(0), want(&ids).as_bytes());
        assert_eq!(each.finish(0), want(&ids).as_bytes());
    }
}
