use super::*;

#[test]
fn the_second_mapping_shows_the_first() {
    let ring = Ring::new(1).unwrap();
    let size = ring.size();
    assert!(size >= 1 && size.is_multiple_of(hugepages::page_size()));
    let bytes: Vec<u8> = (0..10u8).collect();
    // SAFETY: inside the two mappings; nothing else refers to them.
    let (low, high) = unsafe {
        // Written across the end of the first mapping into the
        // second: its last 3 bytes and the second's first 7.
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), ring.base().add(size - 3), 10);
        (
            std::slice::from_raw_parts(ring.base(), 7).to_vec(),
            std::slice::from_raw_parts(ring.base().add(2 * size - 3), 3).to_vec(),
        )
    };
    assert_eq!(low, &bytes[3..]);
    assert_eq!(high, &bytes[..3]);
}

/// What [`pump`] saw.
struct Pumped {
    /// The first ring's size.
    size: usize,
    /// Whether the first ring was mapped once.
    linear: bool,
    /// How often the executor waited for a release.
    waits: usize,
    /// Whether the output moved to another ring.
    grew: bool,
    /// Bytes populated.
    warmed: usize,
}

/// Pushes `blocks` raw blocks of a frame of window `window` that
/// declares `content` bytes or not through a new output, each chunk
/// read and let go of at once, or (`slow`) only when the executor
/// would otherwise write over it. Checks that in a ring mapped twice
/// every block is written behind the first mapping's last block and
/// slack, so through the second mapping but for the block that wraps
/// (see `RingOutput::at`), a grown ring too, and that the chunks read
/// what was written; the stretches `ahead` gives are populated once
/// the next block is written into them (which must not change a byte)
/// and checked to be whole pages of the mapping at most
/// [`WARM_AHEAD`] past the executor.
fn pump(window: usize, content: Option<u64>, blocks: usize, slow: bool) -> Pumped {
    pump_into(RingOutput::new(window, content).unwrap(), blocks, slow)
}

/// [`pump`] into an output made already.
fn pump_into(mut out: RingOutput, blocks: usize, slow: bool) -> Pumped {
    let (first_size, linear) = (out.ring.size(), out.ring.is_linear());
    let block =
        |i: usize| -> Vec<u8> { (0..BLOCK_SIZE_MAX).map(|j| (i * 7 + j / 3) as u8).collect() };
    let mut chunks: VecDeque<Chunk> = VecDeque::new();
    let (mut written, mut expected) = (Vec::new(), Vec::new());
    let (mut waits, mut grew, mut warmed) = (0, false, 0);
    let page = hugepages::page_size();
    for i in 0..blocks {
        let bytes = block(i);
        while out.blocked(bytes.len()) {
            let chunk = chunks.pop_front().expect("blocked only by a chunk held");
            written.extend_from_slice(chunk.bytes());
            drop(chunk);
            out.release_oldest();
            waits += 1;
        }
        let ring = Arc::clone(&out.ring);
        out.room(bytes.len()).unwrap();
        if !Arc::ptr_eq(&out.ring, &ring) {
            grew = true;
            assert!(
                !out.ring.is_linear(),
                "an output moves to a ring mapped twice"
            );
            assert_eq!(
                out.at,
                out.ring.size(),
                "a grown ring goes on in its second mapping"
            );
        }
        drop(ring);
        assert!(
            out.ring.is_linear() || out.at + BLOCK_SIZE_MAX + SLACK >= out.ring.size(),
            "block {i} written at {} of a ring of {}",
            out.at,
            out.ring.size()
        );
        let ahead = out.ahead();
        if let Some(ahead) = &ahead {
            assert!(ahead.at.is_multiple_of(page) && ahead.at >= out.at);
            assert!(ahead.at + ahead.len <= out.ring.end());
            assert!(ahead.at + ahead.len <= out.at + WARM_AHEAD + page);
            warmed += ahead.len;
        }
        out.push_raw(&bytes);
        expected.extend_from_slice(&bytes);
        // After the block is written into the stretch, as when the
        // writer comes late: populating keeps the bytes.
        if let Some(ahead) = ahead {
            ahead.populate();
        }
        // Every chunk held still reads what was handed on.
        chunks.extend(out.take(CHUNK, 1));
        if !slow {
            for chunk in chunks.drain(..) {
                written.extend_from_slice(chunk.bytes());
                out.release_oldest();
            }
        }
    }
    chunks.extend(out.take(0, 0));
    for chunk in chunks {
        written.extend_from_slice(chunk.bytes());
    }
    assert!(written == expected, "the chunks read what was written");
    Pumped {
        size: first_size,
        linear,
        waits,
        grew,
        warmed,
    }
}

#[test]
fn chunks_are_read_in_place_and_never_written_over_before_their_release() {
    let p = pump(1 << 10, None, 100, true);
    // 12.5 MiB through a ring of about 2.1 MiB: the executor waited,
    // and wrapped round the ring a few times; its first lap (the
    // second mapping) was populated once, the later laps not again.
    assert!(!p.linear && p.size < 4 << 20 && p.waits > 5);
    assert_eq!(p.warmed, p.size);
    // The same frame declaring its 12.5 MiB, past its window and lag.
    let declared = pump(1 << 10, Some(100 * BLOCK_SIZE_MAX as u64), 100, true);
    assert!(!declared.linear && declared.size == p.size && declared.waits > 5);
}

#[test]
fn a_short_frame_populates_a_few_mib_ahead_not_its_whole_ring() {
    // Half a MiB of an 8 MiB window (a ring of 10 MiB).
    let p = pump(8 << 20, None, 4, false);
    assert!(p.size > 8 << 20);
    assert!(
        p.warmed > 0 && p.warmed <= (4 * BLOCK_SIZE_MAX) + WARM_AHEAD + hugepages::page_size(),
        "{} bytes populated",
        p.warmed
    );
}

#[test]
fn a_ring_grows_when_the_frames_history_outgrows_it() {
    // A later frame of unknown size, 25 MiB of a 32 MiB window, after
    // an empty one of a 1 MiB window: past that ring's history.
    let mut out = RingOutput::new(1 << 20, None).unwrap();
    out.start_frame(FIRST_HISTORY * 2, None).unwrap();
    let p = pump_into(out, 200, false);
    assert!(!p.linear && p.grew);
}

#[test]
fn a_first_frame_of_unknown_size_and_a_large_window_starts_in_memory_mapped_once() {
    // 25 MiB of a 32 MiB window: no step, where a ring grew at 16 MiB.
    let p = pump(FIRST_HISTORY * 2, None, 200, false);
    assert!(p.linear && !p.grew && p.size >= RingOutput::size_for(FIRST_HISTORY * 2));
    // 37.5 MiB: past the window and lag, on in a ring mapped twice,
    // the history copied over and every byte read back.
    let p = pump(FIRST_HISTORY * 2, None, 300, true);
    assert!(p.linear && p.grew);
}

#[test]
fn a_frame_that_declares_its_size_past_the_first_history_never_grows() {
    // 40 MiB of a 32 MiB window, declared: mapped twice, as the frame
    // outgrows its window and lag, and the whole window at once,
    // where a frame that does not declare it grows at 16 MiB.
    let p = pump(
        FIRST_HISTORY * 2,
        Some(320 * BLOCK_SIZE_MAX as u64),
        320,
        false,
    );
    assert!(!p.linear && !p.grew && p.size > FIRST_HISTORY * 2);
}

#[test]
fn a_frame_that_fits_is_written_once_into_memory_mapped_once() {
    // 12.5 MiB declared, of a 16 MiB window (a `--long` file), read
    // only at the end: no wait, no wrap, no new ring, and only its own
    // size and a block mapped (a ring would have been 18.1 MiB).
    let content = 100 * BLOCK_SIZE_MAX;
    let p = pump(16 << 20, Some(content as u64), 100, true);
    assert!(p.linear && !p.grew && p.waits == 0);
    assert!(p.size >= content + BLOCK_SIZE_MAX + SLACK);
    assert!(p.size < content + BLOCK_SIZE_MAX + SLACK + hugepages::page_size());
    // Within the window and lag, a frame past its window fits too.
    assert!(pump(1 << 20, Some(3 << 20), 24, false).linear);
}

#[test]
fn a_frame_past_its_declared_size_goes_on_in_a_ring_mapped_twice() {
    // Declares 1 MiB and writes 4 (an error at the frame's end): the
    // bytes written before and after the move are all read back.
    let p = pump(8 << 20, Some(1 << 20), 32, true);
    assert!(p.linear && p.grew);
}

#[test]
fn a_later_frame_leaves_memory_mapped_once() {
    let mut out = RingOutput::new(8 << 20, Some(1 << 20)).unwrap();
    assert!(out.ring.is_linear());
    out.push_rle(7, 1000);
    let last = out.take(0, 0).expect("the frame's bytes");
    out.start_frame(8 << 20, Some(1 << 20)).unwrap();
    assert!(!out.ring.is_linear() && out.at == out.ring.size());
    // The first frame's bytes, held, are still there to read.
    assert_eq!(last.bytes(), &[7u8; 1000][..]);
    assert_eq!(out.frame_produced(), 0);
    // A later frame declaring a size and window near 2^64 (refused by the
    // decode at its end) starts as a frame of unknown size would.
    let mut out = RingOutput::new(8 << 20, Some(1 << 20)).unwrap();
    out.start_frame(usize::MAX, Some(u64::MAX - 1)).unwrap();
    assert!(!out.ring.is_linear());
    let unknown = RingOutput::new(usize::MAX, None).unwrap();
    assert_eq!(out.ring.size(), unknown.ring.size());
}
