use std::io::{self, BufRead, Write};

use super::{
    Comparison, EventReader, EventsFormat, ExprFile, Mode, OutputLines, StreamBuffers, StreamError,
    compare, looks_like_json, search_stream,
};

#[test]
fn json_and_erlang_domain_files_are_told_apart() {
    assert!(looks_like_json(r#" [ {"name": "a", "type": "bool"} ]"#));
    assert!(looks_like_json("[]"));
    assert!(looks_like_json("[{}]"));
    assert!(!looks_like_json("[{par1,bool,disallow_undefined}].\n"));
    assert!(!looks_like_json(
        "[{par1,bool,disallow_undefined}]. % trailing comment\n"
    ));
    assert!(!looks_like_json("% header\n[{age,int,allow_undefined}]."));
}

const EXPRS: &str = "[{a,int,disallow_undefined}].\n<<\"a > 1\">>.\n<<\"a < 5\">>.\n";

fn reader<'a>(
    bytes: &'static [u8],
    format: EventsFormat,
    index: &'a crate::Index,
) -> EventReader<'a> {
    let r: Box<dyn BufRead> = Box::new(bytes);
    EventReader::new(r, "ev".into(), format, index.schema())
}

/// Accepts `room` bytes, then fails as a full disk does.
struct Full {
    room: usize,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            // ENOSPC.
            return Err(io::Error::from_raw_os_error(28));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn every_mode_writes_the_same_lines_and_counts_the_ids() {
    let (index, _) = ExprFile::parse(EXPRS.into(), "x").unwrap().build().unwrap();
    for mode in [Mode::Std, Mode::All, Mode::Next, Mode::Batch] {
        let mut events = reader(
            b"{\"a\": 3}\n\n{\"a\": 0}\n{\"a\": 9}\n",
            EventsFormat::Json,
            &index,
        );
        let mut out = Vec::new();
        let mut bufs = StreamBuffers::default();
        let ids = search_stream(&index, &mut events, mode, 1, &mut bufs, &mut out).unwrap();
        assert_eq!((ids, out.as_slice()), (4, &b"1 2\n2\n1\n"[..]), "{mode:?}");
    }
}

#[test]
fn a_bad_event_file_is_an_input_error_and_a_failed_write_a_write_error() {
    let (index, _) = ExprFile::parse(EXPRS.into(), "x").unwrap().build().unwrap();
    let mut bufs = StreamBuffers::default();
    // One search of `bytes` as the event file "ev", writing to `out`.
    let mut search = |bytes: &'static [u8], format, mode, out: &mut dyn Write| {
        let mut events = reader(bytes, format, &index);
        search_stream(&index, &mut events, mode, 0, &mut bufs, out)
    };
    // Not UTF-8 is the event file's fault, though io::Error says it.
    let err = search(
        b"{\"a\": 3}\n{\"a\": \"\xff\"}\n",
        EventsFormat::Json,
        Mode::Std,
        &mut Vec::new(),
    );
    let err = err.unwrap_err();
    assert!(
        matches!(err, StreamError::ReadLine { line: 2, .. }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "reading ev line 2");

    let err = search(
        b"[1].\n[7].\n",
        EventsFormat::Ref,
        Mode::Std,
        &mut Vec::new(),
    );
    let err = err.unwrap_err();
    assert!(
        matches!(err, StreamError::Event { number: 1, .. }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "ev: event 1");

    let err = search(
        b"{\"a\": 3}\n",
        EventsFormat::Json,
        Mode::All,
        &mut Full { room: 2 },
    );
    match err {
        Err(StreamError::Write(e)) => assert_eq!(e.raw_os_error(), Some(28)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn load_errors_name_the_file_and_line() {
    let err = ExprFile::parse("<<\"a > 1\">>.\n".into(), "e.txt")
        .unwrap()
        .build();
    assert_eq!(
        err.unwrap_err().to_string(),
        "e.txt: the first term must be the domain list"
    );
    let text = "[{a,int,disallow_undefined}].\n<<\"a > 1\">>.\n<<\"b > 1\">>.\n";
    let err = ExprFile::parse(text.into(), "e.txt")
        .unwrap()
        .build()
        .unwrap_err();
    assert_eq!(err.to_string(), "e.txt line 3 (expression 2)");
    let mut file = ExprFile::parse("<<\"b > 1\">>.\n".into(), "e.txt").unwrap();
    file.set_domains(
        r#"[{"name": "b", "type": "int", "allow_undefined": false}]"#,
        "d.json",
    )
    .unwrap();
    assert_eq!(file.build().unwrap().0.len(), 1);
    let mut file = ExprFile::parse(String::new(), "e.txt").unwrap();
    let err = file.set_domains("% nothing\n", "d.txt").unwrap_err();
    assert_eq!(err.to_string(), "d.txt: no domain list");
}

#[test]
fn outputs_compare_line_by_line_whatever_their_line_ends() {
    let lines = |text: &'static str, name: &str| {
        let r: Box<dyn BufRead> = Box::new(text.as_bytes());
        OutputLines::new(r, name.into())
    };
    let same = compare(
        &mut lines("1 2\n\n3", "a"),
        &mut lines("1 2\r\n\r\n3\n", "b"),
    );
    assert_eq!(same.unwrap(), Comparison::Identical(3));
    let differs = compare(&mut lines("1\n2\n", "a"), &mut lines("1\n", "b"));
    let want = Comparison::Differs {
        event: 2,
        a: Some("2".into()),
        b: None,
    };
    assert_eq!(differs.unwrap(), want);
    let r: Box<dyn BufRead> = Box::new(&b"1\n\xff\n"[..]);
    let err = compare(
        &mut OutputLines::new(r, "bad".into()),
        &mut lines("1\n2\n", "b"),
    );
    assert_eq!(err.unwrap_err().to_string(), "reading bad");
}
