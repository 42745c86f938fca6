//! `perfkit betree search`: events streamed in, matching ids streamed out
//! in batches.

use super::*;

pub(super) fn search(a: Search) -> Result<ExitCode> {
    refuse_output_over_input(&a.output, &a.input)?;
    let (index, _) = load_index(&a.input)?;
    let mut events = EventReader::open(&a.input, index.schema())?;
    let mut run =
        |out: &mut dyn Write| search_stream(&index, &mut events, a.mode, a.budget, out).map(drop);
    if a.output == Path::new("-") {
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        run(&mut out)?;
        out.flush()?;
    } else {
        // An input or search error is reported as it is, not as a failure
        // to write the output (the partial output is removed either way).
        let mut input_err = None;
        let written = report::write_atomically(&a.output, |f| {
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
    out: &mut dyn Write,
) -> Result<u64> {
    // Events are read into the batch's events in place, batch after batch:
    // a fresh event per line (allocated, filled value by value, freed) cost
    // a dense run about 4% on top of the search.
    let mut batch: Vec<Event> = Vec::with_capacity(SEARCH_BATCH);
    let mut first = 1usize;
    let ids_text = IdText::new();
    let mut line = Vec::new();
    let mut written = 0u64;
    // Reused batch after batch: fresh lists of thousands of ids per event
    // were a tenth of a dense run (allocation, growth and page faults).
    let mut found: Vec<Vec<u64>> = Vec::new();
    let mut scratch = Scratch::default();
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
            return Ok(written);
        }
        let path = &events.path;
        let at = |i: usize| format!("{path}: event {}", first + i);
        let results: &[Vec<u64>] = match mode {
            Mode::Std | Mode::Batch => match index.search_batch_by(batch, &mut found, chunks) {
                Ok(()) => &found,
                // Name the event at fault: the batch path checks them all
                // before it starts, the plain one each on its own.
                Err(e) => {
                    for (i, ev) in batch.iter().enumerate() {
                        index.search(ev).with_context(|| at(i))?;
                    }
                    return Err(e).with_context(|| at(0));
                }
            },
            mode => {
                found.resize_with(batch.len(), Vec::new);
                for (i, ev) in batch.iter().enumerate() {
                    // One scratch for the whole stream: a fresh memo and
                    // selection per event cost more than the search.
                    let mut it = index
                        .search_iter_in(ev, &mut scratch)
                        .with_context(|| at(i))?;
                    found[i] = if mode == Mode::All {
                        index.search_all_in(it, &mut scratch)
                    } else {
                        let ids = loop {
                            if let SearchStep::Done(ids) = index.search_next(&mut it, budget) {
                                break ids;
                            }
                        };
                        scratch = it.into_scratch();
                        ids
                    };
                }
                &found[..batch.len()]
            }
        };
        // Each line is formatted here and handed over whole: two calls
        // through `dyn Write` per id cost more than the search itself on
        // dense workloads (thousands of ids per event).
        let mut touched = 0u64;
        for (k, ids) in results.iter().enumerate() {
            if let Some(next) = results.get(k + 1) {
                touched ^= touch(next);
            }
            out.write_all(ids_text.line(ids, &mut line))?;
            written += ids.len() as u64;
        }
        // Keeps the touching reads from being optimized away.
        std::hint::black_box(touched);
        first += batch.len();
    }
}

/// Reads one id per cache line of `ids` (their xor, which nothing needs),
/// so the lines are in the cache before `ids` is formatted: a batch's ids
/// (10 MB on the dense profile) have left the core's 2 MiB of L2 by the
/// time they are formatted, and the formatting loop, waiting on one line
/// after another, spent most of its time on the loads of the ids (`perf
/// annotate`). These reads are independent of each other, so the misses
/// overlap: formatting plus touching took 0.78x the samples formatting took
/// alone.
fn touch(ids: &[u64]) -> u64 {
    ids.iter().step_by(8).fold(0, |a, &x| a ^ x)
}

/// Writes id lists as text fast: ids below [`IdText::TABLE`] (every id of
/// most indexes) are copied from a table of " 1234" texts, eight bytes
/// at a time, instead of being formatted one by one; a dense search prints
/// thousands of ids per event, and formatting them was a tenth of its time.
pub(super) struct IdText {
    /// Per id, as little-endian bytes: a space, its digits, zero padding,
    /// and in the last byte how many bytes are text (six at most), so one
    /// eight-byte load gives both.
    table: Vec<u64>,
}

impl IdText {
    /// Ids with an entry: five digits at most, so space + digits fit.
    const TABLE: u64 = 1 << 16;

    /// Room an id takes in the line buffer: the table's eight-byte copy,
    /// or (for the rest) a space and at most 20 digits.
    const MAX_ID_TEXT: usize = 21;

    fn new() -> IdText {
        let mut num = itoa::Buffer::new();
        let table = (0..IdText::TABLE)
            .map(|id| {
                let digits = num.format(id).as_bytes();
                let mut text = [0u8; 8];
                text[0] = b' ';
                text[1..=digits.len()].copy_from_slice(digits);
                text[7] = digits.len() as u8 + 1;
                u64::from_le_bytes(text)
            })
            .collect();
        IdText { table }
    }

    /// `ids` separated by spaces, then a newline, written in `line`.
    ///
    /// `line` is only grown, never cleared, and written by position: with
    /// no length to keep and no capacity check per id, the loop is two
    /// loads, a store and an add. That counts once the ids are in the cache
    /// ([`touch`]): formatting took 0.88x the samples of the copy-then-
    /// truncate loop then (without the touch 0.94x, within the noise).
    fn line<'a>(&self, ids: &[u64], line: &'a mut Vec<u8>) -> &'a [u8] {
        // Eight bytes an id from the table, the newline, and one id's
        // widest text, so only an id past the table needs another check.
        let room = |n: usize| n * 8 + 1 + IdText::MAX_ID_TEXT;
        if line.len() < room(ids.len()) {
            line.resize(room(ids.len()), 0);
        }
        let mut at = 0;
        let mut num = itoa::Buffer::new();
        for (k, &id) in ids.iter().enumerate() {
            match usize::try_from(id).ok().and_then(|i| self.table.get(i)) {
                Some(&text) => {
                    // The whole entry, then on past its text only: a fixed
                    // eight-byte copy instead of a variable-length one.
                    line[at..at + 8].copy_from_slice(&text.to_le_bytes());
                    at += (text >> 56) as usize;
                }
                None => {
                    // Wider than eight bytes: keep room for the ids after.
                    let need = at + IdText::MAX_ID_TEXT + room(ids.len() - k);
                    if line.len() < need {
                        line.resize(need, 0);
                    }
                    let digits = num.format(id).as_bytes();
                    line[at] = b' ';
                    line[at + 1..at + 1 + digits.len()].copy_from_slice(digits);
                    at += 1 + digits.len();
                }
            }
        }
        line[at] = b'\n';
        // Every id wrote a separating space before it; the first has none.
        &line[usize::from(!ids.is_empty())..=at]
    }
}

#[cfg(test)]
mod id_text_tests {
    use super::IdText;

    #[test]
    fn lines_are_the_ids_as_decimal_text() {
        let t = IdText::new();
        let mut buf = Vec::new();
        let cases: [&[u64]; 6] = [
            &[],
            &[0],
            &[1, 9, 10, 99, 100, 999, 1000, 9999, 10000],
            &[65534, 65535, 65536, 65537],
            &[u64::MAX, 7, u64::from(u32::MAX) + 1],
            &[42; 3],
        ];
        for ids in cases {
            // The oracle: std's formatting, joined.
            let want: Vec<String> = ids.iter().map(u64::to_string).collect();
            let want = format!("{}\n", want.join(" "));
            // A dirty buffer from a longer line before must not leak in.
            buf.extend_from_slice(b"leftover leftover");
            assert_eq!(t.line(ids, &mut buf), want.as_bytes(), "{ids:?}");
        }
        // Ids past the table, many of them after short ones: the buffer,
        // sized for eight bytes an id, grows for them as it goes.
        let ids: Vec<u64> = (0..50).chain((0..500).map(|k| u64::MAX - k)).collect();
        let want: Vec<String> = ids.iter().map(u64::to_string).collect();
        let mut buf = Vec::new();
        assert_eq!(
            t.line(&ids, &mut buf),
            format!("{}\n", want.join(" ")).as_bytes()
        );
    }
}
