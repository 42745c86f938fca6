use super::*;
use crate::expr::{Constants, Expr, compile_source};
use crate::parse::{Node, Ref};
use proptest::prelude::*;

/// Prints a tree the way the reference generator does, independently of
/// the generator: non-leaf operands parenthesised; `names` by boolean
/// slot.
fn show(e: &Expr, r: Ref, names: &[String]) -> String {
    let wrap = |x: Ref| match e.node(x) {
        Node::Bool(_) => show(e, x, names),
        _ => format!("({})", show(e, x, names)),
    };
    match e.node(r) {
        Node::Bool(s) => names[s as usize].clone(),
        Node::Not(x) => format!("not {}", wrap(x)),
        Node::And(l, r) => format!("{} and {}", wrap(l), wrap(r)),
        Node::Or(l, r) => format!("{} or {}", wrap(l), wrap(r)),
        other => panic!("unexpected node {other:?}"),
    }
}

fn leaves(e: &Expr, r: Ref, names: &[String], out: &mut Vec<String>) {
    match e.node(r) {
        Node::Bool(s) => out.push(names[s as usize].clone()),
        Node::Not(x) => leaves(e, x, names, out),
        Node::And(l, r) | Node::Or(l, r) => {
            leaves(e, l, names, out);
            leaves(e, r, names, out);
        }
        other => panic!("unexpected node {other:?}"),
    }
}

#[test]
fn reads_the_reference_layout() {
    let text = "[{par1,bool,disallow_undefined},\n {par2,bool,disallow_undefined},\n {par3,bool,disallow_undefined}].\n<<\"(par3 and par1) or (not par2)\">>.\n<<\"par1 or (not (par2 and par3))\">>.\n";
    let f = read_expr_file(text).unwrap();
    assert_eq!(f.domains, params_domains(3));
    assert_eq!(
        f.exprs,
        vec![
            "(par3 and par1) or (not par2)",
            "par1 or (not (par2 and par3))"
        ]
    );
    assert_eq!(write_expr_file(&f.domains, &f.exprs), text);
    let events = "[false,true,true].\n[0,0,1].\n";
    assert_eq!(
        read_event_file(events).unwrap(),
        vec![vec![false, true, true], vec![false, false, true]]
    );
}

#[test]
fn reads_every_domain_type_with_bounds() {
    let text = "[[{i,int,disallow_undefined,0,10},{n,int64,allow_undefined},{f,float,allow_undefined,0.0,10.5},\n{s,bin,disallow_undefined,5},{il,int_list,allow_undefined},{sl,bin_list,allow_undefined},\n{e,int_enum,allow_undefined,0,3},{seg,segments,allow_undefined},{frequency_caps,frequency_caps,allow_undefined}]].\n<<\"s = \\\"a\\\\b\\\"\">>.\n";
    let f = read_expr_file(text).unwrap();
    let tys: Vec<AttrType> = f.domains.iter().map(|d| d.ty).collect();
    use AttrType::*;
    assert_eq!(
        tys,
        vec![
            Int,
            Int,
            Float,
            Str,
            IntList,
            StrList,
            IntEnum,
            Segments,
            FrequencyCaps
        ]
    );
    assert_eq!(f.domains[0].bounds, Bounds::Int(0, 10));
    assert_eq!(f.domains[2].bounds, Bounds::Float(0.0, 10.5));
    assert_eq!(f.domains[3].bounds, Bounds::MaxStrings(5));
    assert!(!f.domains[3].allow_undefined && f.domains[1].allow_undefined);
    assert_eq!(f.exprs, vec!["s = \"a\\b\""]);
    // And back: the rewritten file reads the same.
    let again = read_expr_file(&write_expr_file(&f.domains, &f.exprs)).unwrap();
    assert_eq!(again, f);
}

#[test]
fn writer_quotes_atoms_and_spells_floats_as_erlang_does() {
    let domains = vec![
        Domain::new("Par1", AttrType::Bool, true),
        Domain::new("it's", AttrType::Float, false).with_bounds(Bounds::Float(-1e-7, 1e300)),
        Domain::new("ok_name@x", AttrType::Int, true),
    ];
    let text = write_expr_file(&domains, &[]);
    assert_eq!(
        text,
        "[{'Par1',bool,allow_undefined},\n {'it\\'s',float,disallow_undefined,-1.0e-7,1.0e300},\n {ok_name@x,int,allow_undefined}].\n"
    );
    assert_eq!(read_expr_file(&text).unwrap().domains, domains);
}

/// Quoted text is copied run by run between the bytes that need a look:
/// every escape, a line break inside the quotes (which later lines'
/// numbers count), non-ASCII text and a quote of the other kind come
/// through as written.
#[test]
fn quoted_text_keeps_escapes_line_breaks_and_other_quotes() {
    let text = "[{a,bool,allow_undefined}].\n<<\"a \\\"x\\\" é\\\\\\n\n'q'\\t\">>.\n<<\"not a\">>.\n<<\"a\nb\">> x.";
    let terms = read_terms(text, "expression file");
    let err = terms.unwrap_err().to_string();
    // The last binary starts on line 5 (after a line break inside the
    // first binary) and, with one of its own, ends on line 6 before `x`.
    assert_eq!(
        err,
        "expression file line 6, column 6: expected `.` ending the term, found `x`"
    );
    let ok = &text[..text.rfind("\n<<\"a\nb").unwrap()];
    let terms = read_terms(ok, "expression file").unwrap();
    let lines: Vec<usize> = terms.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [1, 2, 4]);
    assert_eq!(terms[1].1, Term::Binary("a \"x\" é\\\n\n'q'\t".into()));
    assert_eq!(terms[2].1, Term::Binary("not a".into()));
}

#[test]
fn format_errors_name_line_and_column() {
    let e = |t: &str| read_expr_file(t).unwrap_err().to_string();
    assert_eq!(
        e(""),
        "expression file line 1, column 1: empty file: expected the list of domains"
    );
    assert_eq!(
        e("[{a,bool,disallow_undefined}]\n<<\"a\">>."),
        "expression file line 2, column 1: expected `.` ending the term, found `<`"
    );
    assert_eq!(
        e("[{a,boolx,disallow_undefined}]."),
        "domain list line 1, column 1: unknown domain type `boolx` of `a`"
    );
    assert_eq!(
        e("[{a,bool,maybe}]."),
        "domain list line 1, column 1: `maybe` of `a` is neither allow_undefined nor disallow_undefined"
    );
    assert_eq!(
        e("[{a,bool,allow_undefined}].\n<<\"a>>."),
        "expression file line 2, column 8: unterminated `\"`"
    );
    assert_eq!(
        e("[{a,bool,allow_undefined}].\n[1]."),
        "expression file line 2, column 1: expected <<\"expression\">>, found List([Int(1)])"
    );
    assert_eq!(
        e("[{a,bool,allow_undefined} {b}]."),
        "expression file line 1, column 27: expected `,` or `]` in a list, found `{`"
    );
    assert_eq!(
        read_event_file("[0,1].\n[0,2].").unwrap_err().to_string(),
        "event file line 2, column 1: expected 0, 1, true or false, found Int(2)"
    );
}

#[test]
fn events_wrap_at_38_items() {
    let ev: Vec<bool> = (0..128).map(|i| i % 3 == 0).collect();
    let mut s = String::new();
    write_event(&mut s, &ev);
    let digits: Vec<&str> = ev.iter().map(|b| if *b { "1" } else { "0" }).collect();
    let expected = format!(
        "[{},\n {},\n {},\n {}].\n",
        digits[0..38].join(","),
        digits[38..76].join(","),
        digits[76..114].join(","),
        digits[114..].join(",")
    );
    assert_eq!(s, expected);
    // Lines stay within Erlang's 80 columns.
    assert!(s.lines().all(|l| l.len() <= 80));
    assert_eq!(read_event_file(&s).unwrap(), vec![ev]);
}

#[test]
fn generator_is_deterministic_and_uses_every_parameter_once() {
    assert_eq!(random_expressions(20, 50, 9), random_expressions(20, 50, 9));
    assert_ne!(
        random_expressions(20, 50, 9),
        random_expressions(20, 50, 10)
    );
    assert_eq!(random_events(20, 5, 3), random_events(20, 5, 3));
    let (mut ands, mut ors, mut nots) = (0usize, 0usize, 0usize);
    let schema = Schema::boolean_params(64);
    let mut names = vec![String::new(); 64];
    for (id, d) in schema.domains().iter().enumerate() {
        names[schema.bool_slot(id as u32).unwrap() as usize] = d.name.clone();
    }
    for e in random_expressions(64, 200, 1) {
        let ast = compile_source(
            &schema,
            &mut crate::strings::Strings::new(&schema),
            &e,
            &Constants::default(),
            &mut |_| 0,
        )
        .unwrap();
        let mut l = Vec::new();
        leaves(&ast, ast.root, &names, &mut l);
        l.sort();
        let mut want: Vec<String> = (1..=64).map(|i| format!("par{i}")).collect();
        want.sort();
        assert_eq!(l, want, "{e}");
        assert_eq!(show(&ast, ast.root, &names), e, "parenthesisation");
        ands += e.matches(" and ").count();
        ors += e.matches(" or ").count();
        nots += e.matches("not ").count();
    }
    // 63 joins per expression, split evenly between `and` and `or`; `not`
    // is picked a fifth of the time, so about 63/4 per expression.
    assert_eq!(ands + ors, 63 * 200);
    let share = ands as f64 / (ands + ors) as f64;
    assert!((0.45..0.55).contains(&share), "and share {share}");
    let per = nots as f64 / 200.0;
    assert!((13.0..19.0).contains(&per), "nots per expression {per}");
}

/// Every event of `text` read through [`EventStream`], its reader
/// buffer a few bytes so that lines arrive in pieces.
fn stream_events(text: impl AsRef<[u8]>) -> Result<Vec<(usize, Vec<bool>)>> {
    let mut s = EventStream::new(std::io::BufReader::with_capacity(7, text.as_ref()));
    let mut v = Vec::new();
    while let Some(e) = s.next_event()? {
        v.push(e);
    }
    Ok(v)
}

#[test]
fn event_stream_reads_the_generated_events_with_their_lines() {
    let events = random_events(100, 50, 9);
    let got = stream_events(write_event_file(&events)).unwrap();
    // 100 values take 3 lines (38 per line) in the writer's layout.
    let lines: Vec<usize> = got.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, (0..50).map(|k| 1 + 3 * k).collect::<Vec<_>>());
    let values: Vec<Vec<bool>> = got.into_iter().map(|(_, v)| v).collect();
    assert_eq!(values, events);
}

#[test]
fn event_stream_handles_terms_sharing_lines_comments_and_quotes() {
    let text =
        "% header. with a dot.\n[0,1].[true,\n false]. % done.\n\n[1,\n% a comment line.\n 0].\n";
    let got = stream_events(text).unwrap();
    assert_eq!(
        got,
        vec![
            (2, vec![false, true]),
            (2, vec![true, false]),
            (5, vec![true, false])
        ]
    );
    // A `.` ending a line inside a quoted atom does not end the term:
    // the whole term is read, then rejected as no event.
    let err = stream_events("[0].\n['a.\nb'].\n").unwrap_err();
    assert!(matches!(err, Error::Format { line: 2, .. }), "{err}");
}

#[test]
fn event_stream_errors_name_the_files_own_line() {
    let text = "[0,1].\n[1,0].\n[1,\n 2].\n";
    let err = stream_events(text).unwrap_err();
    assert_eq!(err, read_event_file(text).unwrap_err());
    assert!(matches!(err, Error::Format { line: 3, .. }), "{err}");
    let err = stream_events("[0].\n[1\n").unwrap_err();
    assert!(matches!(err, Error::Format { line: 3, .. }), "{err}");
    let err = stream_events(b"[0].\n[\xff].\n").unwrap_err();
    assert!(matches!(err, Error::Format { line: 2, .. }), "{err}");
}

/// Every event of `text` as [`EventStream`] gives them, with a reader
/// buffer of `cap` bytes, up to and including the first error.
fn streamed(text: &[u8], cap: usize) -> Vec<Result<(usize, Vec<bool>)>> {
    let mut s = EventStream::new(std::io::BufReader::with_capacity(cap, text));
    let mut v = Vec::new();
    loop {
        match s.next_event() {
            Ok(Some(e)) => v.push(Ok(e)),
            Ok(None) => return v,
            Err(e) => {
                v.push(Err(e));
                return v;
            }
        }
    }
}

/// The same through the general reader alone ([`TermStream`], then each
/// term's values): what the stream gave before it read plain events
/// straight from the bytes.
fn streamed_as_terms(text: &[u8]) -> Vec<Result<(usize, Vec<bool>)>> {
    let mut s = TermStream::new(text, "event file");
    let mut v = Vec::new();
    loop {
        match s.next_term().and_then(|t| {
            t.map(|(line, t)| Ok((line, event_values(line, &t)?)))
                .transpose()
        }) {
            Ok(Some(e)) => v.push(Ok(e)),
            Ok(None) => return v,
            Err(e) => {
                v.push(Err(e));
                return v;
            }
        }
    }
}

#[test]
fn plain_events_read_straight_match_the_general_reader() {
    let cases: &[&str] = &[
        "[0,1].\n[1,0].\n",
        "\n\n [0,\n 1] .\t\r\n[true , false].\n",
        "[0,1].",
        "[0,1]\n.\n[1].\n",
        "[].\n[0].\n",
        "[0,1]. [1].\n",
        "[0,1]. % done\n[1].\n",
        "[01,1].\n",
        "[0,1.5].\n",
        "[truex].\n",
        "[0,,1].\n",
        "[0,1,].\n",
        "[0,2].\n[1].\n",
        "[0,1]\n",
        "[0,1].x\n",
        "[0 1].\n",
        // The digit-comma run, broken by each thing it must stop at.
        "[1,0,1,1,0,0,1,0].\n",
        "[1,0,1,\n 0,0 ,1,true,0,\t1].\n",
        "[1,0,1,0,01,1].\n",
        "[1,0,1,0,2,1].\n",
        "[1,0,1,0,,1].\n",
        "[1,0,1,0,].\n",
        "[1,0,1,0,1.\n",
    ];
    for text in cases {
        let want = streamed_as_terms(text.as_bytes());
        for cap in [1, 3, 7, 64, 4096] {
            assert_eq!(
                streamed(text.as_bytes(), cap),
                want,
                "{text:?}, buffer {cap}"
            );
        }
    }
}

proptest! {
    #[test]
    fn plain_and_general_event_reading_agree(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "[", "]", ",", ".", "0", "1", "true", "false", " ", "\n", "\r", "\t",
                "%c.\n", "2", "'a.'", "01", "x", "[0,1].\n", "[1,\n 0].\n",
            ]),
            0..40,
        ),
        cap in 1usize..64,
    ) {
        let text = parts.concat();
        let want = streamed_as_terms(text.as_bytes());
        prop_assert_eq!(streamed(text.as_bytes(), cap), want.clone());
        prop_assert_eq!(streamed(text.as_bytes(), 1 << 16), want);
    }

    #[test]
    fn event_files_round_trip(events in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 1..200), 0..5)) {
        let text = write_event_file(&events);
        prop_assert_eq!(read_event_file(&text).unwrap(), events);
    }

    #[test]
    fn expression_files_round_trip(exprs in proptest::collection::vec("[ -~]{0,40}", 0..5), n in 1usize..10) {
        let domains = params_domains(n);
        let text = write_expr_file(&domains, &exprs);
        let f = read_expr_file(&text).unwrap();
        prop_assert_eq!(f.domains, domains);
        prop_assert_eq!(f.exprs, exprs);
    }
}

#[test]
fn events_set_in_place_are_the_ones_built_from_values() {
    use crate::{Domain, Event, Schema};
    for n in [0, 1, 63, 64, 65, 128, 200] {
        let schema = Schema::boolean_params(n);
        let mut ev = Event::empty(&schema);
        for values in random_events(n, 4, n as u64) {
            ev.set_bools(&schema, &values).unwrap();
            assert_eq!(ev, Event::from_bools(&schema, &values).unwrap(), "{n}");
        }
        // A wrong count is from_bools's error, and the event stays.
        let before = ev.clone();
        let wrong = vec![true; n + 1];
        assert_eq!(
            ev.set_bools(&schema, &wrong),
            Event::from_bools(&schema, &wrong).map(drop)
        );
        assert_eq!(ev, before);
    }
    // Not every attribute boolean, or an event of another schema: the
    // same as from_bools either way.
    let mixed = Schema::from_domains([
        Domain::new("a", AttrType::Bool, false),
        Domain::new("i", AttrType::Int, false),
    ])
    .unwrap();
    let mut ev = Event::empty(&Schema::boolean_params(3));
    assert_eq!(
        ev.set_bools(&mixed, &[true, false]),
        Event::from_bools(&mixed, &[true, false]).map(drop)
    );
    let two = Schema::boolean_params(2);
    ev.set_bools(&two, &[false, true]).unwrap();
    assert_eq!(ev, Event::from_bools(&two, &[false, true]).unwrap());
}
