use super::*;
use fixcore::build::TimePrecision;
use fixcore::version::BeginString;

/// A message from the counterparty (BENCH -> EXCH, FIX.4.4).
fn inbound(b: &mut MessageBuilder, msg_type: &[u8], seq: u64, body: &[(u32, &[u8])]) -> Vec<u8> {
    b.begin(msg_type)
        .header_uint(34, seq)
        .header_str(49, "BENCH")
        .header_timestamp(52, T, TimePrecision::Millis)
        .header_str(56, "EXCH");
    for &(tag, v) in body {
        b.field_bytes(tag, v);
    }
    b.finish().unwrap().to_vec()
}

/// An acceptor session (EXCH, FIX.4.4, memory store) logged on by
/// BENCH, and a builder for BENCH's next messages.
fn logged_on() -> (Session<crate::store::MemoryStore>, MessageBuilder) {
    let cfg = Config {
        reset_on_logon: true,
        check_latency: false,
        ..Config::new(Role::Acceptor, BeginString::Fix44, "EXCH", "BENCH")
    };
    let mut s = Session::new(cfg, crate::store::MemoryStore::default());
    let mut b = MessageBuilder::new(BeginString::Fix44);
    s.on_connect(T).unwrap();
    let logon = inbound(&mut b, b"A", 1, &[(98, b"0"), (108, b"30"), (141, b"Y")]);
    s.on_message(&logon, T).unwrap();
    (s, b)
}

const T: UtcTimestamp = UtcTimestamp {
    unix_nanos: 1_700_000_000_000_000_000,
};

/// The session lends its parse only for the latest delivery that the
/// strict parser accepted: two deliveries at once (a gap filled) lend
/// the second alone, and the lent view reads what a fresh parse reads.
#[test]
fn a_parse_is_lent_for_the_latest_strict_delivery_only() {
    let (mut s, mut b) = logged_on();
    let later = inbound(&mut b, b"D", 3, &[(11, b"third"), (55, b"X")]);
    s.on_message(&later, T).unwrap();
    let gap = inbound(&mut b, b"D", 2, &[(11, b"second"), (55, b"X")]);
    s.on_message(&gap, T).unwrap();
    let delivered: Vec<Vec<u8>> = s
        .drain()
        .filter_map(|o| match o {
            Output::Deliver(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(delivered.len(), 2);
    assert!(s.lend_parser(&delivered[0]).is_none(), "not the latest");
    // A copy of the latest is not the delivered buffer either.
    assert!(s.lend_parser(&delivered[1].clone()).is_none());
    let parser = s.lend_parser(&delivered[1]).expect("the latest is lent");
    let view = parser.view(&delivered[1]);
    let mut fresh = Parser::new();
    let want = fresh.parse(&later).unwrap();
    assert_eq!(view.get(11), Some(&b"third"[..]));
    assert_eq!(
        view.fields().map(|f| (f.tag, f.value)).collect::<Vec<_>>(),
        want.fields().map(|f| (f.tag, f.value)).collect::<Vec<_>>()
    );
    s.give_back_parser(parser);
    assert!(s.lend_parser(&delivered[1]).is_none(), "lent once");
    // A repeated tag: delivered through the lenient reading, no parse.
    let dup = inbound(&mut b, b"D", 4, &[(11, b"a"), (58, b"x"), (58, b"y")]);
    s.on_message(&dup, T).unwrap();
    let lenient: Vec<Vec<u8>> = s
        .drain()
        .filter_map(|o| match o {
            Output::Deliver(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(lenient.len(), 1);
    assert!(s.lend_parser(&lenient[0]).is_none());
}

/// A ResendRequest 1..0 over many stored messages sends one batch at
/// once; the rest follow batch by batch as the driver asks, every number
/// exactly once, in order, the admin ones gap-filled.
#[test]
fn a_long_resend_goes_out_in_batches() {
    let (mut s, mut b) = logged_on();
    let n = 5 * RESEND_BATCH + 7;
    for i in 0..n {
        let id = i.to_string();
        assert!(
            s.send_app(b"8", T, |b| {
                b.field_str(11, &id);
            })
            .unwrap()
        );
    }
    s.drain().for_each(drop);
    let request = inbound(&mut b, b"2", 2, &[(7, b"1"), (16, b"0")]);
    s.on_message(&request, T).unwrap();
    let mut seqs = Vec::new();
    let mut rounds = 0;
    loop {
        let sent: Vec<Vec<u8>> = s
            .drain()
            .filter_map(|o| match o {
                Output::Send(m) => Some(m),
                _ => None,
            })
            .collect();
        assert!(
            sent.len() as u64 <= RESEND_BATCH + 1,
            "{} at once",
            sent.len()
        );
        let mut p = Parser::new();
        for m in &sent {
            let m = p.parse(m).unwrap();
            let seq = fixcore::value::parse_uint(m.get(34).unwrap()).unwrap();
            match m.msg_type() {
                b"4" => {
                    let to = fixcore::value::parse_uint(m.get(36).unwrap()).unwrap();
                    seqs.extend(seq..to);
                }
                _ => {
                    assert_eq!(m.get(43), Some(&b"Y"[..]));
                    seqs.push(seq);
                }
            }
        }
        rounds += 1;
        if !s.resend_pending() {
            break;
        }
        s.continue_resend(T).unwrap();
    }
    // Number 1 (the Logon) gap-filled, then every order.
    assert_eq!(seqs, (1..=n + 1).collect::<Vec<_>>());
    assert!(rounds > 5, "{rounds} rounds");
}
