use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{FilesError, Input, diff, search_to, write_output};
use crate::stream::{Comparison, EventsFormat, Mode, StreamError};

const EXPRS: &str = "[{a,int,disallow_undefined}].\n<<\"a > 1\">>.\n<<\"a < 5\">>.\n";

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("betree-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn input(dir: &Scratch, events: &str) -> Input {
    Input {
        exprs: dir.file("exprs", EXPRS),
        events: dir.file("events", events),
        events_format: EventsFormat::Json,
        domains: None,
    }
}

/// The line `betree_cli`'s users read: the error and its causes joined,
/// as the binary joins them.
fn line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cause = e.source();
    while let Some(c) = cause {
        parts.push(c.to_string());
        cause = c.source();
    }
    parts.join(": ")
}

#[test]
fn a_search_lands_its_lines_in_the_output_file() {
    let dir = Scratch::new("lands");
    let input = input(&dir, "{\"a\": 3}\n{\"a\": 0}\n{\"a\": 9}\n");
    let (index, _) = input.load_index().unwrap();
    let mut events = input.open_events(index.schema()).unwrap();
    let out = dir.0.join("out");
    let mut stdout = Vec::new();
    search_to(&index, &mut events, Mode::Std, 0, &out, &mut stdout).unwrap();
    // a > 1 and a < 5: 3 matches both, 0 the second, 9 the first.
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "1 2\n2\n1\n");
    assert!(stdout.is_empty(), "a file output writes nothing to stdout");

    let (index, events, _) = input.load().unwrap();
    assert_eq!(events.len(), 3);
    let mut events = input.open_events(index.schema()).unwrap();
    search_to(
        &index,
        &mut events,
        Mode::Next,
        1,
        Path::new("-"),
        &mut stdout,
    )
    .unwrap();
    assert_eq!(stdout, b"1 2\n2\n1\n", "`-` is the writer passed");
}

#[test]
fn a_failed_search_leaves_the_old_output_and_no_temporary() {
    let dir = Scratch::new("failed");
    let input = input(&dir, "{\"a\": 3}\n{\"a\": \"x\"}\n");
    let (index, _) = input.load_index().unwrap();
    let out = dir.file("out", "kept\n");
    let mut events = input.open_events(index.schema()).unwrap();
    let err = search_to(&index, &mut events, Mode::Std, 0, &out, &mut io::sink()).unwrap_err();
    assert!(
        matches!(
            err,
            FilesError::Stream(StreamError::EventLine { line: 2, .. })
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "kept\n");
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().collect();
    assert_eq!(
        left.len(),
        3,
        "exprs, events and out, no temporary: {left:?}"
    );
}

/// Accepts nothing, as a full disk does.
struct Full;

impl Write for Full {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from_raw_os_error(28))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failed_write_is_the_outputs_and_names_it() {
    let err = write_output(Path::new("-"), &mut Full, |out| {
        Ok(out.write_all(&[b'1'; 1 << 17])?)
    })
    .unwrap_err();
    assert!(matches!(err, FilesError::Write { .. }), "{err:?}");
    assert!(
        line(&err).starts_with("writing standard output: No space left on device"),
        "{}",
        line(&err)
    );
    let dir = Scratch::new("nodir");
    let out = dir.0.join("missing").join("out");
    let err = write_output(&out, &mut io::sink(), |_| Ok(())).unwrap_err();
    assert!(matches!(err, FilesError::Land { .. }), "{err:?}");
    assert!(
        line(&err).starts_with(&format!("writing {}", out.display())),
        "{}",
        line(&err)
    );
}

#[test]
fn an_input_missing_or_a_domain_file_replacing_the_list_is_named() {
    let dir = Scratch::new("inputs");
    let mut input = input(&dir, "{\"b\": true}\n");
    input.domains = Some(dir.file(
        "domains",
        r#"[{"name": "b", "type": "bool", "allow_undefined": false}]"#,
    ));
    std::fs::write(&input.exprs, "[{a,int,disallow_undefined}].\n<<\"b\">>.\n").unwrap();
    let (index, events, _) = input.load().unwrap();
    assert_eq!((index.len(), events.len()), (1, 1));

    input.events = dir.0.join("nope");
    let Err(err) = input.open_events(index.schema()) else {
        panic!("a missing event file opened");
    };
    let FilesError::Read { name, source } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(
        (name.as_str(), source.kind()),
        (
            dir.0.join("nope").to_str().unwrap(),
            io::ErrorKind::NotFound
        )
    );
    input.exprs = dir.0.join("gone");
    assert!(matches!(
        input.load_index(),
        Err(FilesError::Read { name, .. }) if name.ends_with("gone")
    ));
}

#[test]
fn an_output_that_is_an_input_is_refused_through_links() {
    let dir = Scratch::new("over");
    let mut input = input(&dir, "{\"a\": 3}\n");
    input.domains = Some(dir.file("domains", "[{a,int,disallow_undefined}]."));
    let fresh = dir.0.join("fresh");
    assert!(input.refuse_output_over(&fresh).is_ok());
    assert!(input.refuse_output_over(Path::new("-")).is_ok());
    let hard = dir.0.join("hard");
    std::fs::hard_link(&input.events, &hard).unwrap();
    let soft = dir.0.join("soft");
    std::os::unix::fs::symlink(input.domains.as_ref().unwrap(), &soft).unwrap();
    for (output, what) in [
        (&input.exprs, "expression file"),
        (&hard, "event file"),
        (&soft, "domain file"),
    ] {
        let err = input.refuse_output_over(output).unwrap_err();
        assert!(
            matches!(&err, FilesError::OutputIsInput { what: w, .. } if *w == what),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("refusing to write"), "{err}");
    }
}

#[test]
fn two_outputs_are_compared_and_the_difference_described() {
    let dir = Scratch::new("diff");
    let a = dir.file("a", "1 2\n\n3\n");
    let b = dir.file("b", "1 2\r\n\n");
    let same = diff(&a, &a).unwrap();
    assert_eq!(same, Comparison::Identical(3));
    assert_eq!(same.describe(&a, &a), "identical: 3 events");
    let differs = diff(&a, &b).unwrap();
    assert_eq!(
        differs.describe(Path::new("a"), Path::new("b")),
        "event 3 differs: a has `3`, b has no such event"
    );
    let c = dir.file("c", "1 2\n2\n");
    assert_eq!(
        diff(&a, &c)
            .unwrap()
            .describe(Path::new("a"), Path::new("c")),
        "event 2 differs: a has no match, c has `2`"
    );
    assert!(matches!(
        diff(&a, &dir.0.join("none")),
        Err(FilesError::Read { .. })
    ));
}

#[test]
fn a_generated_workload_lands_as_the_whole_file_would_be_written() {
    use super::{Generated, Workload, generate};
    use crate::reference;
    let dir = Scratch::new("generate");
    let (exprs, events) = (dir.0.join("exprs"), dir.0.join("events"));
    let boolean = Workload::Boolean { params: 5 };
    generate(&boolean, Generated::Exprs, 20, 7, &exprs, &mut io::sink()).unwrap();
    generate(&boolean, Generated::Events, 30, 7, &events, &mut io::sink()).unwrap();
    let whole_exprs = reference::write_expr_file(
        &reference::params_domains(5),
        &reference::random_expressions(5, 20, 7),
    );
    assert_eq!(std::fs::read_to_string(&exprs).unwrap(), whole_exprs);
    let whole_events = reference::write_event_file(&reference::random_events(5, 30, 7));
    assert_eq!(std::fs::read_to_string(&events).unwrap(), whole_events);

    let adtech = crate::workload::Adtech::with_shape(Default::default()).unwrap();
    let mut expected = Vec::new();
    adtech.write_events(&mut expected, 4, 9).unwrap();
    let mut stdout = Vec::new();
    let adtech = Workload::Adtech(Box::new(adtech));
    generate(
        &adtech,
        Generated::Events,
        4,
        9,
        Path::new("-"),
        &mut stdout,
    )
    .unwrap();
    assert_eq!(stdout, expected);
}
