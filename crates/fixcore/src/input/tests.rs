use super::{Origin, ReadError, Sink, each_message, line_message, several_messages};
use std::io::{self, Read};

/// Every message and problem, as the sink sees them.
#[derive(Default)]
struct Seen {
    messages: Vec<Vec<u8>>,
    problems: Vec<(Origin, String)>,
}

impl Sink for &mut Seen {
    type Error = ReadError;
    fn message(&mut self, bytes: &[u8]) -> Result<Option<String>, ReadError> {
        self.messages.push(bytes.to_vec());
        Ok(None)
    }
    fn problem(&mut self, origin: Origin, why: &str) -> Result<(), ReadError> {
        self.problems.push((origin, why.to_owned()));
        Ok(())
    }
}

/// Gives `good`, then fails as a disk does.
struct Failing<'a> {
    good: &'a [u8],
}

impl Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.good.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        let n = self.good.read(buf)?;
        Ok(n)
    }
}

#[test]
fn a_failed_read_is_a_read_error_naming_the_input_in_either_form() {
    let soh = b"8=FIX.4.4\x019=5\x0135=0\x0110=163\x01".as_slice();
    let bar = b"8=FIX.4.4|9=5|35=0|10=163|\n".as_slice();
    for good in [soh, bar] {
        let mut seen = Seen::default();
        let err = each_message(Failing { good }, "capture.fix", &mut seen).unwrap_err();
        assert_eq!(err.to_string(), "reading capture.fix");
        assert_eq!(err.source.raw_os_error(), Some(libc::EIO));
    }
}

#[test]
fn stray_bytes_in_a_stream_are_one_problem_at_their_line_and_offset() {
    let msg = "8=FIX.4.4\x019=5\x0135=0\x0110=163\x01";
    let input = format!("{msg}\n{msg}junk{msg}\n");
    let mut seen = Seen::default();
    each_message(input.as_bytes(), "capture.fix", &mut seen).unwrap();
    assert_eq!(seen.messages, vec![msg.as_bytes().to_vec(); 3]);
    let at = (2 * msg.len() + 1) as u64;
    let why = "garbage: 4 bytes that are not a FIX message, skipped".to_owned();
    assert_eq!(seen.problems, vec![(Origin::LineOffset(2, at), why)]);
}

/// Line breaks and blanks between the messages of a stream (CRLF,
/// blank lines, a blank before stray bytes) are no problem, and stray
/// bytes after them are reported from their first visible byte, at the
/// line and input offset counted by hand here.
#[test]
fn blanks_between_messages_of_a_stream_are_skipped_and_origins_hold() {
    let msg = "8=FIX.4.4\x019=5\x0135=0\x0110=163\x01";
    let input = format!("{msg}\r\n{msg}\n \t\n  junk\n{msg}\n\n{msg} \r\n\n");
    let mut seen = Seen::default();
    each_message(input.as_bytes(), "log.fix", &mut seen).unwrap();
    assert_eq!(seen.messages, vec![msg.as_bytes().to_vec(); 4]);
    let at = input.find("junk").unwrap() as u64;
    let why = "garbage: 4 bytes that are not a FIX message, skipped".to_owned();
    assert_eq!(seen.problems, vec![(Origin::LineOffset(4, at), why)]);
}

/// The definitions the fast forms must keep: each byte mapped, and
/// message starts counted window by window.
fn by_definition(line: &[u8]) -> (Vec<u8>, bool) {
    let l = line.strip_suffix(b"\r").unwrap_or(line);
    let soh = l.contains(&1);
    let mapped = l
        .iter()
        .map(|&b| if b == b'|' && !soh { 1 } else { b })
        .collect();
    let starts = line
        .windows(6)
        .filter(|w| w[0] == b'|' && &w[1..] == b"8=FIX")
        .count();
    (mapped, starts + usize::from(line.starts_with(b"8=FIX")) > 1)
}

/// Gives `data` `n` bytes a read at most.
struct Dribble<'a> {
    data: &'a [u8],
    n: usize,
}

impl Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.n.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Whatever the reads, the sink gets each line of the `|` form as
/// [`line_message`] defines it (by [`by_definition`]): lines mapped in
/// place by the read, and lines copied one by one (an SOH of its own,
/// whose `|` are data; the last line, without a line break).
#[test]
fn lines_reach_the_sink_as_defined_whatever_the_reads() {
    let bar: &[u8] = b"8=FIX.4.4|9=5|35=0|10=163|";
    let soh: &[u8] = b"8=FIX.4.4\x019=5\x0135=0\x0158=a|b\x0110=163\x01";
    let mut lines: Vec<Vec<u8>> = Vec::new();
    // The first chunk has no SOH, so the input is read as lines.
    while lines.iter().map(|l| l.len() + 1).sum::<usize>() <= super::CHUNK {
        lines.push(bar.to_vec());
    }
    for i in 0..1200 {
        // Lines of every length modulo the vectors, so their ends fall
        // in every lane of the pass that finds them.
        let mut l = bar.to_vec();
        l.splice(19..19, [&b"58="[..], &vec![b'x'; i % 67], b"|"].concat());
        if i % 7 == 0 {
            l.push(b'\r');
        }
        lines.push(l);
        match i % 400 {
            3 => lines.push(soh.to_vec()),
            4 => lines.extend([soh.to_vec(), soh.to_vec(), b"".to_vec(), b" \r".to_vec()]),
            _ => {}
        }
    }
    lines.push(bar.to_vec());
    let input = lines.join(&b'\n');
    let want: Vec<Vec<u8>> = lines
        .iter()
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| by_definition(l).0)
        .collect();
    for n in [997, 4096, super::CHUNK + 1] {
        let mut seen = Seen::default();
        each_message(Dribble { data: &input, n }, "lines.fix", &mut seen).unwrap();
        assert!(seen.problems.is_empty(), "{n}: {:?}", seen.problems);
        assert_eq!(seen.messages.len(), want.len(), "{n}");
        for (k, (got, want)) in seen.messages.iter().zip(&want).enumerate() {
            assert_eq!(got, want, "read size {n}, message {k}");
        }
    }
}

#[test]
fn lines_map_and_count_message_starts_as_defined() {
    let lines: &[&[u8]] = &[
        b"",
        b"|",
        b"8=FIX.4.4|9=5|35=0|10=000|",
        b"8=FIX.4.4|9=5|35=0|10=000|8=FIX.4.4|9=5|35=0|10=000|",
        b"junk|8=FIX.4.4|9=5|35=0|10=000|",
        b"junk|8=FIX.4.4|9=5|35=0|10=000||8=FIX.4.2|",
        b"8=FIX.4.4\x019=5\x0135=0\x01|8=FIX|10=000\x01\r",
        b"8=FIX.4.4|58=a|b|8=FIX|10=000|\r",
        b"|8=FI|8=FIX",
        b"8=FIX8=FIX|8=FI",
    ];
    for line in lines {
        let mut out = Vec::new();
        line_message(line, &mut out);
        let (mapped, several) = by_definition(line);
        let shown = String::from_utf8_lossy(line);
        assert_eq!(out, mapped, "{shown}");
        assert_eq!(several_messages(line), several, "{shown}");
        // Mapped in place (no SOH of its own), the line is `out`.
        if !line.contains(&1) {
            assert_eq!(super::several_mapped(&out), several, "{shown}");
        }
    }
    // A long line crosses the SIMD search's blocks.
    let mut long = b"8=FIX.4.4|".to_vec();
    long.extend(b"58=".iter().chain(&[b'x'; 300]));
    long.extend_from_slice(b"|8=FIX.4.4|");
    assert!(several_messages(&long));
    assert!(!several_messages(&long[1..]));
}
