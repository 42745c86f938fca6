//! Every format through [`Job::run`], each checked against an oracle that
//! is not zstdkit: zstd's C library called directly (`zstd_safe`), its
//! reference seekable reader, and flate2's gzip decoder.

use super::*;

use crate::Recipe;
use crate::pipeline::tests::Shared;

/// Text-like runs between noise, different at every offset.
fn data(len: usize, seed: u64) -> Vec<u8> {
    let noise = perfkit_testkit::noise::noise(len, seed);
    (0..len)
        .map(|i| {
            if (i / 4096) % 3 != 0 {
                b"job dispatch "[i % 13]
            } else {
                noise[i]
            }
        })
        .collect()
}

/// Runs `job` over `input` into memory; returns the output, the outcome
/// and the last position progress heard.
fn run(job: Job<'_>, input: &[u8], size: Option<u64>) -> Result<(Vec<u8>, Outcome, u64), JobError> {
    let sink = Shared::default();
    let mut last = 0;
    let done = job.run(
        Box::new(io::Cursor::new(input.to_vec())),
        size,
        Some(Box::new(sink.clone())),
        &mut |at| last = at,
    )?;
    let out = std::mem::take(&mut *sink.0.lock().unwrap());
    Ok((out, done, last))
}

/// zstd's own one-shot decoder over every frame of `frames`.
fn zstd_decompress(frames: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 1);
    zstd_safe::decompress(&mut out, frames).expect("zstd decodes it");
    out
}

/// zstd's own one-shot encoder: one frame of `data`.
fn zstd_compress(data: &[u8], level: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    zstd_safe::compress(&mut out, data, level).expect("zstd compresses it");
    out
}

fn zstd(params: Params) -> Job<'static> {
    Job::Compress(Compress::Zstd {
        params,
        dictionary: None,
    })
}

fn frames(threads: usize) -> Job<'static> {
    Job::Decompress(Decompress::Frames {
        window: WindowLimit::Default,
        dictionary: None,
        threads,
        verify_checksums: true,
        pass_through: false,
    })
}

#[test]
fn zstd_in_place_streaming_and_on_workers_decode_with_zstd() {
    let input = data(3 << 20, 1);
    let params = Recipe::Balanced.params();
    // Known size: in place, on a runway; unknown: the largest runway; with
    // workers: zstd's streaming buffer.
    for (params, size) in [
        (params, Some(input.len() as u64)),
        (params, None),
        (params.workers(2), Some(input.len() as u64)),
        (params.workers(2), None),
    ] {
        let (out, done, last) = run(zstd(params), &input, size).unwrap();
        assert_eq!(
            zstd_decompress(&out, input.len()),
            input,
            "{params:?} {size:?}"
        );
        assert_eq!(done.read, input.len() as u64);
        assert_eq!(done.written, out.len() as u64);
        assert_eq!(last, done.read, "progress reaches the end");
        assert_eq!(done.parallel, None);
        let declared = zstd_safe::get_frame_content_size(&out).unwrap();
        assert_eq!(declared, size, "the size is in the header only when given");
    }
}

#[test]
fn an_empty_input_is_one_empty_frame() {
    let (out, done, _) = run(zstd(Recipe::Fast.params()), &[], Some(0)).unwrap();
    assert_eq!((done.read, done.written), (0, out.len() as u64));
    assert!(zstd_decompress(&out, 0).is_empty());
}

#[test]
fn a_dictionary_is_used_both_ways() {
    let dict = data(50_000, 2);
    let input = [&dict[1000..20_000], &data(10_000, 3)[..]].concat();
    let job = Job::Compress(Compress::Zstd {
        params: Recipe::Text.params(),
        dictionary: Some(&dict),
    });
    let (packed, ..) = run(job, &input, Some(input.len() as u64)).unwrap();
    let mut oracle = Vec::with_capacity(input.len());
    zstd_safe::DCtx::create()
        .decompress_using_dict(&mut oracle, &packed, &dict)
        .unwrap();
    assert_eq!(oracle, input);
    // And back, from zstd's own frame with the dictionary.
    let mut theirs = Vec::with_capacity(zstd_safe::compress_bound(input.len()));
    zstd_safe::CCtx::create()
        .compress_using_dict(&mut theirs, &input, &dict, 3)
        .unwrap();
    for threads in [1, 2] {
        let job = Job::Decompress(Decompress::Frames {
            window: WindowLimit::Default,
            dictionary: Some(&dict),
            threads,
            verify_checksums: true,
            pass_through: false,
        });
        assert_eq!(run(job, &theirs, None).unwrap().0, input);
    }
    // Without it, zstd's frame does not decode (a raw-content dictionary
    // has no id for the frame to name, so zstd sees corrupt data).
    let err = run(frames(1), &theirs, None).unwrap_err();
    assert!(matches!(err, JobError::Codec(_)), "{err:?}");
}

#[test]
fn seekable_frames_are_read_by_the_reference_reader() {
    let input = data(700_000, 4);
    for threads in [1, 3] {
        let job = Job::Compress(Compress::Seekable {
            params: Recipe::Fast.params(),
            frames: Seekable {
                frame_size: 100_000,
                checksums: true,
            },
            threads,
        });
        let (file, done, last) = run(job, &input, None).unwrap();
        assert_eq!(
            (done.read, done.written),
            (input.len() as u64, file.len() as u64)
        );
        assert_eq!(last, done.read);
        let mut reference = zstd_safe::seekable::Seekable::create();
        reference.init_buff(&file).unwrap();
        assert_eq!(reference.num_frames(), 7, "{threads} threads");
        let mut part = vec![0u8; 5000];
        let n = reference.decompress(&mut part[..], 250_000).unwrap();
        assert_eq!(&part[..n], &input[250_000..255_000]);
        assert_eq!(zstd_decompress(&file, input.len()), input);
        // Several frames: decoded on several threads.
        let (back, done, _) = run(frames(2), &file, None).unwrap();
        assert_eq!(back, input);
        let parallel = done.parallel.expect("seekable frames split");
        assert_eq!(parallel.frames, 8, "seven frames and the seek table");
    }
}

#[test]
fn patches_decode_with_zstd_against_the_reference_and_back() {
    let reference = data(400_000, 5);
    let mut target = reference.clone();
    target[200_000..200_010].copy_from_slice(b"0123456789");
    target.extend_from_slice(b"and a tail");
    let job = Job::Compress(Compress::Patch {
        params: Recipe::Balanced.params(),
        reference: &reference,
    });
    let (patch, done, _) = run(job, &target, None).unwrap();
    assert!(patch.len() < 1000, "{} bytes", patch.len());
    assert_eq!(done.read, target.len() as u64);
    let mut dctx = zstd_safe::DCtx::create();
    dctx.ref_prefix(&reference).unwrap();
    let mut oracle = Vec::with_capacity(target.len());
    dctx.decompress(&mut oracle, &patch).unwrap();
    assert_eq!(oracle, target);

    // zstd's own patch, applied.
    let mut cctx = zstd_safe::CCtx::create();
    cctx.ref_prefix(&reference).unwrap();
    // The checksum is what tells a wrong reference.
    cctx.set_parameter(zstd_safe::CParameter::ChecksumFlag(true))
        .unwrap();
    let mut theirs = Vec::with_capacity(zstd_safe::compress_bound(target.len()));
    cctx.compress2(&mut theirs, &target).unwrap();
    let apply = |reference| Job::Decompress(Decompress::Patch { reference });
    let (back, done, _) = run(apply(&reference), &theirs, None).unwrap();
    assert_eq!(back, target);
    assert_eq!(
        (done.read, done.written),
        (theirs.len() as u64, target.len() as u64)
    );
    // Against another reference it fails as the patch's error.
    let other = data(400_000, 6);
    let err = run(apply(&other), &theirs, None).unwrap_err();
    assert!(matches!(err, JobError::Patch(_)), "{err:?}");
}

#[test]
fn gzip_is_written_and_every_member_read() {
    let input = data(600_000, 7);
    let (gz, done, _) = run(Job::Compress(Compress::Gzip { level: 6 }), &input, None).unwrap();
    assert_eq!(
        (done.read, done.written),
        (input.len() as u64, gz.len() as u64)
    );
    let mut oracle = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut oracle)
        .unwrap();
    assert_eq!(oracle, input);

    // Two members from flate2's encoder, read whatever the threads.
    let member = |d: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(d).unwrap();
        e.finish().unwrap()
    };
    let two = [member(&input[..1000]), member(&input[1000..])].concat();
    for threads in [1, 2] {
        let (back, done, _) = run(frames(threads), &two, None).unwrap();
        assert_eq!(back, input);
        assert_eq!(done.read, two.len() as u64);
        assert_eq!(done.parallel, None);
    }
    let err = run(frames(1), b"\x1f\x8bnot gzip at all", None).unwrap_err();
    assert!(matches!(err, JobError::Gzip(_)), "{err:?}");
}

/// A gzip member whose header has every optional field, each as long as
/// asked (`extra` at most 65,535 bytes, gzip's limit), and a CRC-16 of it
/// (`bad_hcrc`: off by one); the body and trailer are flate2's.
fn member_with_fields(
    data: &[u8],
    extra: usize,
    name: usize,
    comment: usize,
    bad_hcrc: bool,
) -> Vec<u8> {
    let mut header = vec![0x1f, 0x8b, 8, 0b0001_1110, 0, 0, 0, 0, 0, 3];
    header.extend_from_slice(&u16::try_from(extra).unwrap().to_le_bytes());
    header.extend((0..extra).map(|i| (i % 251) as u8));
    header.extend((0..name).map(|i| b'a' + (i % 26) as u8));
    header.push(0);
    header.extend((0..comment).map(|i| b'A' + (i % 26) as u8));
    header.push(0);
    let mut crc = flate2::Crc::new();
    crc.update(&header);
    let hcrc = (crc.sum() as u16).wrapping_add(u16::from(bad_hcrc));
    header.extend_from_slice(&hcrc.to_le_bytes());
    let mut body = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    body.write_all(data).unwrap();
    header.extend(body.finish().unwrap());
    let mut crc = flate2::Crc::new();
    crc.update(data);
    header.extend_from_slice(&crc.sum().to_le_bytes());
    header.extend_from_slice(&crc.amount().to_le_bytes());
    header
}

/// gzip takes header fields of any length; flate2's parser refused a
/// name or comment of 64 KiB or more. They are skipped as they stream by,
/// checked by the header's CRC-16; one cut short is an error.
#[test]
fn gzip_header_fields_of_any_length_are_skipped() {
    let input = data(300_000, 11);
    let long = member_with_fields(&input, 65_535, 100 << 10, 200 << 10, false);
    let short = member_with_fields(b"tail", 0, 0, 0, false);
    let two = [long.clone(), short].concat();
    for threads in [1, 2] {
        let (back, done, _) = run(frames(threads), &two, None).unwrap();
        assert_eq!(back.len(), input.len() + 4);
        assert!(back == [&input[..], b"tail"].concat());
        assert_eq!(done.read, two.len() as u64);
    }
    let (_, done, _) = run_discarding(frames(1), &long).unwrap();
    assert_eq!(done.written, input.len() as u64);
    let bad = member_with_fields(&input, 10, 70_000, 0, true);
    let err = run(frames(1), &bad, None).unwrap_err();
    assert!(
        std::error::Error::source(&err)
            .unwrap()
            .to_string()
            .contains("CRC-16"),
        "{err:?}"
    );
    // Cut in the long name, in the trailer, and after a whole member.
    for cut in [10 + 2 + 65_535 + 50_000, long.len() - 3] {
        let err = run(frames(1), &long[..cut], None).unwrap_err();
        let JobError::Gzip(e) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "cut at {cut}");
    }
    let err = run(frames(1), &[&long[..], b"\x1f\x8b\x08"].concat(), None).unwrap_err();
    assert!(matches!(err, JobError::Gzip(_)), "{err:?}");
    // A corrupt body or trailer fails too.
    let mut wrong = long.clone();
    let at = wrong.len() - 1;
    wrong[at] ^= 1;
    assert!(matches!(
        run(frames(1), &wrong, None),
        Err(JobError::Gzip(_))
    ));
}

/// As [`run`], with no output: decoded and discarded, as `-t` does.
fn run_discarding(job: Job<'_>, input: &[u8]) -> Result<(Vec<u8>, Outcome, u64), JobError> {
    let done = job.run(
        Box::new(io::Cursor::new(input.to_vec())),
        None,
        None,
        &mut |_| {},
    )?;
    Ok((Vec::new(), done, 0))
}

/// The input to a patch is read up to the limit and no further: an
/// endless one (a device, a pipe) is refused holding at most limit + 1
/// bytes, where reading to the end ran out of memory.
#[test]
fn a_patch_input_is_read_up_to_its_limit() {
    let endless = || Box::new(io::repeat(7)) as Box<dyn Read + Send>;
    let err = read_up_to(endless(), 10 << 20, None).unwrap_err();
    assert!(
        matches!(err, JobError::PatchTooLarge { limit } if limit == 10 << 20),
        "{err:?}"
    );
    let exact = |n: usize| Box::new(io::Cursor::new(vec![1u8; n])) as Box<dyn Read + Send>;
    assert_eq!(read_up_to(exact(1000), 1000, None).unwrap().len(), 1000);
    assert_eq!(
        read_up_to(exact(1000), 1000, Some(1000)).unwrap().len(),
        1000
    );
    assert!(read_up_to(exact(1001), 1000, None).is_err());
    assert!(
        read_up_to(exact(3 << 20), 3 << 20, None)
            .unwrap()
            .capacity()
            <= (3 << 20) + 1
    );
}

/// A patch decodes as it streams: zstd's own patch (made here with its
/// C library and the reference as prefix) in pieces, into a small output
/// buffer, and discarded for -t; cut or followed by bytes, it fails.
#[test]
fn a_patch_decodes_as_it_streams() {
    let reference = data(2 << 20, 21);
    let mut target = reference.clone();
    target[1 << 20..(1 << 20) + 5].copy_from_slice(b"NEW!!");
    target.extend(data(700_000, 22));
    let patch = crate::patch::diff(&reference, &target, Recipe::Balanced).unwrap();
    let apply = Job::Decompress(Decompress::Patch {
        reference: &reference,
    });
    let (back, done, last) = run(apply, &patch, None).unwrap();
    assert!(back == target);
    assert_eq!(
        (done.read, done.written, last),
        (patch.len() as u64, target.len() as u64, patch.len() as u64)
    );
    let (_, done, _) = run_discarding(apply, &patch).unwrap();
    assert_eq!(done.written, target.len() as u64);
    for bad in [
        &patch[..patch.len() - 1],
        &[&patch[..], b"x"].concat()[..],
        b"",
    ] {
        assert!(matches!(run(apply, bad, None), Err(JobError::Patch(_))));
    }
}

#[test]
fn zstds_frames_decode_on_one_thread_or_several() {
    let parts = [data(200_000, 8), data(10, 9), data(300_000, 10)];
    let input: Vec<u8> = parts.iter().flat_map(|p| zstd_compress(p, 3)).collect();
    let want = parts.concat();
    // A file's size, or none (a pipe), where the first frame streams in
    // order and only the rest goes to the workers.
    for (threads, size) in [1, 2, 4]
        .into_iter()
        .flat_map(|t| [(t, None), (t, Some(input.len()))])
    {
        let (out, done, last) = run(frames(threads), &input, size.map(|n| n as u64)).unwrap();
        assert_eq!(out, want, "{threads} threads");
        assert_eq!(
            (done.read, done.written),
            (input.len() as u64, want.len() as u64)
        );
        assert_eq!(last, done.read);
        match done.parallel {
            Some(p) => assert_eq!(
                (threads > 1, p.frames, p.streamed),
                (true, 3, u64::from(size.is_none()))
            ),
            None => assert_eq!(threads, 1),
        }
    }
}

#[test]
fn from_a_pipe_a_lone_frame_is_decoded_as_one_thread_decodes_it() {
    let want = data(700_000, 12);
    let one = zstd_compress(&want, 3);
    let mut reported = Vec::new();
    let done = frames(2)
        .run(
            Box::new(io::Cursor::new(one.clone())),
            None,
            Some(Box::new(Shared::default())),
            &mut |at| reported.push(at),
        )
        .unwrap();
    // No worker took it: the outcome is one thread's.
    assert!(done.parallel.is_none());
    assert_eq!(
        (done.read, done.written),
        (one.len() as u64, want.len() as u64)
    );
    // Heard as it is read, not only at its end.
    assert!(reported.len() > 1 && reported.last() == Some(&done.read));
    let (out, ..) = run(frames(2), &one, None).unwrap();
    assert_eq!(out, zstd_decompress(&one, want.len()));
    // What follows the first frame is named as the workers name it, by
    // its number and offset in the whole input.
    for tail in [&b"not zstd"[..], &one[..one.len() / 2]] {
        let input = [&one[..], &one[..], tail].concat();
        match run(frames(2), &input, None) {
            Err(JobError::Codec(Error::InFrame { index, offset, .. })) => {
                assert_eq!((index, offset), (2, 2 * one.len() as u64))
            }
            other => panic!("{:?}", other.map(|(_, done, _)| done)),
        }
    }
}

#[test]
fn with_no_output_the_input_is_checked_and_counted() {
    let want = data(300_000, 11);
    let input = zstd_compress(&want, 1);
    for threads in [1, 2] {
        let done = frames(threads)
            .run(
                Box::new(io::Cursor::new(input.clone())),
                None,
                None,
                &mut |_| {},
            )
            .unwrap();
        assert_eq!(
            (done.read, done.written),
            (input.len() as u64, want.len() as u64)
        );
    }
    let mut cut = input.clone();
    cut.truncate(input.len() - 10);
    for threads in [1, 2] {
        let err = frames(threads)
            .run(
                Box::new(io::Cursor::new(cut.clone())),
                None,
                None,
                &mut |_| {},
            )
            .unwrap_err();
        let truncated = match &err {
            JobError::Codec(Error::Truncated { .. }) => true,
            JobError::Codec(Error::InFrame { source, .. }) => {
                matches!(**source, Error::Truncated { .. })
            }
            _ => false,
        };
        assert!(truncated, "{threads} threads: {err:?}");
    }
}

/// zstd's own frame of `data` in two writes, so of unknown size, with a
/// window of 2^`window_log` bytes.
fn unsized_frame(data: &[u8], window_log: u32) -> Vec<u8> {
    use zstd_safe::zstd_sys::ZSTD_EndDirective::{ZSTD_e_continue, ZSTD_e_end};
    let mut cctx = zstd_safe::CCtx::create();
    cctx.set_parameter(zstd_safe::CParameter::WindowLog(window_log))
        .unwrap();
    let mut frame = Vec::new();
    let (first, second) = data.split_at(data.len() / 2);
    for (part, directive) in [(first, ZSTD_e_continue), (second, ZSTD_e_end)] {
        let mut input = zstd_safe::InBuffer::around(part);
        loop {
            let len = frame.len();
            frame.reserve(1 << 16);
            let mut out = zstd_safe::OutBuffer::around_pos(&mut frame, len);
            let left = cctx
                .compress_stream2(&mut out, &mut input, directive)
                .unwrap();
            let flushed = directive == ZSTD_e_continue || left == 0;
            if input.pos() == part.len() && flushed {
                break;
            }
        }
    }
    frame
}

#[test]
fn a_window_past_the_limit_is_refused_unless_allowed() {
    // zstd's own stream of unknown size keeps its whole 2^28 window.
    let input = data(100_000, 12);
    let frame = unsized_frame(&input, 28);
    assert_eq!(zstd_safe::get_frame_content_size(&frame).unwrap(), None);
    let decode = |window, threads| {
        let job = Job::Decompress(Decompress::Frames {
            window,
            dictionary: None,
            threads,
            verify_checksums: true,
            pass_through: false,
        });
        run(job, &frame, None).map(|(out, ..)| out)
    };
    for threads in [1, 2] {
        let err = decode(WindowLimit::Default, threads).unwrap_err();
        let window = match &err {
            JobError::Codec(Error::WindowTooLarge { window, .. }) => *window,
            JobError::Codec(Error::InFrame { source, .. }) => match **source {
                Error::WindowTooLarge { window, .. } => window,
                _ => None,
            },
            _ => None,
        };
        assert_eq!(window, Some(1 << 28), "{threads} threads: {err:?}");
        assert_eq!(decode(WindowLimit::Log(28), threads).unwrap(), input);
        assert_eq!(decode(WindowLimit::Bytes(1 << 28), threads).unwrap(), input);
    }
}

/// Accepts `room` bytes, then fails every write with a broken pipe.
struct Refuses {
    room: usize,
}

impl Write for Refuses {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Fails every read.
struct Unreadable;

impl Read for Unreadable {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(io::ErrorKind::PermissionDenied.into())
    }
}

#[test]
fn errors_say_which_side_failed() {
    let input = data(4 << 20, 13);
    let refusing = || -> Option<Box<dyn Write + Send>> { Some(Box::new(Refuses { room: 1000 })) };
    let fast = Recipe::Fast.params();
    for job in [
        zstd(fast),
        zstd(fast.workers(2)),
        Job::Compress(Compress::Gzip { level: 1 }),
    ] {
        let err = job
            .run(
                Box::new(io::Cursor::new(input.clone())),
                None,
                refusing(),
                &mut |_| {},
            )
            .unwrap_err();
        match err {
            JobError::Output(e) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe),
            other => panic!("{job:?}: {other:?}"),
        }
        let err = job
            .run(
                Box::new(Unreadable),
                None,
                Some(Box::new(io::sink())),
                &mut |_| {},
            )
            .unwrap_err();
        match err {
            JobError::Input(e) => assert_eq!(e.kind(), io::ErrorKind::PermissionDenied),
            other => panic!("{job:?}: {other:?}"),
        }
    }
    // Several threads decoding write from the frame walker: either side.
    // From a pipe (no size) the first frame is written behind, whose
    // writer's error is the output's once the frame is decoded.
    let packed: Vec<u8> = input
        .chunks(1 << 20)
        .flat_map(|c| zstd_compress(c, 1))
        .collect();
    for size in [Some(packed.len() as u64), None] {
        let err = frames(2)
            .run(
                Box::new(io::Cursor::new(packed.clone())),
                size,
                refusing(),
                &mut |_| {},
            )
            .unwrap_err();
        match (err, size) {
            (JobError::InputOrOutput(e), _) | (JobError::Output(e), None) => {
                assert_eq!(e.kind(), io::ErrorKind::BrokenPipe)
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn pass_through_copies_what_follows_the_last_frame_as_zstd_does() {
    let text = data(10_000, 4);
    let frame = zstd_compress(&text, 3);
    let pass = |threads| {
        Job::Decompress(Decompress::Frames {
            window: WindowLimit::Default,
            dictionary: None,
            threads,
            verify_checksums: true,
            pass_through: true,
        })
    };
    for tail in [&b"j"[..], b"junk", b"not a frame, longer than a header"] {
        let input = [&frame[..], &frame, tail].concat();
        let want = [&text[..], &text, tail].concat();
        for threads in [1, 2] {
            let (out, done, _) = run(pass(threads), &input, None).unwrap();
            assert!(out == want && done.passed_through, "{tail:?} on {threads}");
            assert_eq!(
                (done.read, done.written),
                (input.len() as u64, want.len() as u64)
            );
        }
        // Without pass-through, the same input is refused where the
        // frames end.
        let err = run(frames(1), &input, None).unwrap_err();
        assert!(
            matches!(err, JobError::Codec(Error::UnknownFormat { offset }) if offset == 2 * frame.len() as u64),
            "{err}"
        );
    }
    // What is no frame, though it starts as zstd's magic number does, two
    // bytes before the end of a read: those bytes are held as a header in
    // pieces, and copied too.
    let payload = DECODE_READ_SIZE - 2 - 8;
    let mut skippable = vec![0x50, 0x2a, 0x4d, 0x18];
    skippable.extend_from_slice(&(payload as u32).to_le_bytes());
    skippable.resize(DECODE_READ_SIZE - 2, 7);
    let tail = b"\x28\xb5junk after a read's end";
    let input = [&skippable[..], tail].concat();
    let (out, done, _) = run(pass(1), &input, None).unwrap();
    assert!(
        out == tail && done.passed_through,
        "{:?}",
        String::from_utf8_lossy(&out[..out.len().min(40)])
    );
    // Not a frame from the start (shorter than a magic number too).
    for plain in [&b"ab"[..], b"plain text\n"] {
        let (out, done, _) = run(pass(1), plain, None).unwrap();
        assert!(out == plain && done.passed_through);
    }
}
