//! Session-layer scenarios scripted as wire messages, in the manner of
//! QuickFIX's acceptance tests: "the counterparty sends this, the session
//! must send exactly that".
//!
//! A script line is one step:
//! - `connect` / `disconnect`: the connection comes up / goes down;
//! - `> fields`: the counterparty sends a message. The script gives every
//!   field but BodyLength(9) and CheckSum(10), which this file computes
//!   itself (byte counting and summing written here, not the library's),
//!   unless the script gives them (a wrong length or checksum on purpose);
//!   a line not starting with BeginString is sent as it is. `52=NOW` is
//!   the clock's time, `52=NOW-200` 200 seconds before, `NOW+200` after.
//!   The bytes go through a [`Framer`] first, as on a connection: what it
//!   cannot frame never reaches the session;
//! - `< fields`: the session must send exactly these fields, in this order;
//!   `TIME` matches any UTCTimestamp, and 9 and 10 are checked by the same
//!   independent arithmetic;
//! - `deliver N`: the application receives the message numbered N;
//! - `app TYPE|fields`: our application sends a message of that type;
//! - `logged-on`, `logged-out`, `disconnected`: those events, in order;
//! - `wait S`: S seconds pass and the session's timer runs;
//! - `seqs S T`: the store's next sender and target numbers;
//! - `# ...`: a comment.
//!
//! After the last step no output may be left unchecked. `|` stands for SOH.
//!
//! Scripts run with [`Echo`] (`Script::echo`) hand each delivered message
//! to the application QuickFIX's acceptance tests run against, as `perfkit
//! fix acceptor --app echo` does, so its answers are checked with `<` too.

use perfkit_testkit::fix_wire::{self as wire, quickfix_spec};

use fixcore::frame::Framer;
use fixcore::session::app::Echo;
use fixcore::session::app::{Application, Delivered};
use fixcore::session::machine::{Config, Output, Role, Session};
use fixcore::session::store::{MemoryStore, SessionStore};
use fixcore::settings::{BeginString, TimeOfDay, Weekday};
use fixcore::value::UtcTimestamp;
use fixcore::window::TimeWindow;

/// 2026-11-23 12:00:00 UTC, the scripts' clock at the start.
const T0: i64 = 1_795_435_200 * 1_000_000_000;

fn config(bs: BeginString, role: Role) -> Config {
    let (ours, theirs) = match role {
        Role::Acceptor => ("ISLD", "TW"),
        Role::Initiator => ("TW", "ISLD"),
    };
    Config {
        default_appl_ver_id: (bs == BeginString::Fixt11)
            .then_some(fixcore::settings::ApplVerId::Fix50Sp2),
        ..Config::new(role, bs, ours, theirs)
    }
}

/// A complete message from the script's fields (BeginString first):
/// `NOW` / `NOW-n` / `NOW+n` in SendingTime and OrigSendingTime become
/// the clock's time, n seconds back or on. BodyLength and CheckSum are
/// added unless the script gives them; a line that does not start with
/// BeginString is taken as it is.
fn frame(fields: &str, now: i64) -> Vec<u8> {
    let parts: Vec<String> = fields
        .split('|')
        .filter(|f| !f.is_empty())
        .map(|f| {
            let (tag, value) = f.split_once('=').unwrap_or((f, ""));
            match value.strip_prefix("NOW") {
                Some(rest) if tag == "52" || tag == "122" => {
                    let shift: i64 = match rest.split_at(rest.len().min(1)) {
                        ("-", n) => -n.parse::<i64>().unwrap(),
                        ("+", n) => n.parse().unwrap(),
                        _ => 0,
                    };
                    format!("{tag}={}", wire::timestamp(now + shift * 1_000_000_000))
                }
                _ => f.to_string(),
            }
        })
        .collect();
    let has_length = parts.iter().any(|p| p.starts_with("9="));
    let has_sum = parts.last().is_some_and(|p| p.starts_with("10="));
    if !parts[0].starts_with("8=") || (has_length && has_sum) {
        return parts
            .iter()
            .map(|p| format!("{p}\x01"))
            .collect::<String>()
            .into_bytes();
    }
    if has_length {
        // The script's own (wrong) BodyLength, a CheckSum counted here.
        let mut msg: Vec<u8> = parts
            .iter()
            .map(|p| format!("{p}\x01"))
            .collect::<String>()
            .into_bytes();
        let sum: u32 = msg.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
        msg.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
        return msg;
    }
    if has_sum {
        // A counted BodyLength, the script's own (wrong) CheckSum.
        let (sum, rest) = parts.split_last().unwrap();
        let mut msg = wire::frame(&rest.join("|"));
        let at = msg.len() - 7;
        msg.truncate(at);
        msg.extend_from_slice(format!("{sum}\x01").as_bytes());
        return msg;
    }
    wire::frame(&parts.join("|"))
}

/// The fields of a sent message after checking its BodyLength and
/// CheckSum by hand.
fn fields_of(msg: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8(msg.to_vec()).expect("ASCII message");
    assert!(text.ends_with('\x01'), "{text:?} does not end with SOH");
    let fields: Vec<&str> = text[..text.len() - 1].split('\x01').collect();
    let (last, rest) = fields.split_last().unwrap();
    let sum_at = text.len() - last.len() - 1;
    let sum: u32 = msg[..sum_at].iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
    assert_eq!(*last, format!("10={sum:03}"), "checksum of {text:?}");
    let body_start = rest[0].len() + rest[1].len() + 2;
    assert_eq!(
        rest[1],
        format!("9={}", sum_at - body_start),
        "body length of {text:?}"
    );
    rest.iter()
        .map(|f| {
            let (t, v) = f.split_once('=').unwrap();
            (t.to_string(), v.to_string())
        })
        .collect()
}

fn is_timestamp(v: &str) -> bool {
    let b = v.as_bytes();
    (b.len() == 17 || b.len() == 21)
        && b[8] == b'-'
        && b[11] == b':'
        && b[14] == b':'
        && (b.len() == 17 || b[17] == b'.')
        && b.iter()
            .enumerate()
            .all(|(i, c)| matches!(i, 8 | 11 | 14 | 17) || c.is_ascii_digit())
}

struct Script {
    session: Session<MemoryStore>,
    now: i64,
    pending: std::collections::VecDeque<Output>,
    name: String,
    framer: Framer,
    echo: Option<Echo>,
}

impl Script {
    fn new(name: &str, cfg: Config) -> Script {
        Script {
            session: Session::new(cfg, MemoryStore::default()),
            now: T0,
            pending: Default::default(),
            name: name.into(),
            framer: Framer::new(1 << 20).session_cut(),
            echo: None,
        }
    }

    /// Delivered messages go to the echo application.
    fn echo(mut self) -> Script {
        self.echo = Some(Echo::default());
        self
    }

    fn now(&self) -> UtcTimestamp {
        UtcTimestamp {
            unix_nanos: self.now,
        }
    }

    fn collect(&mut self) {
        loop {
            let outs: Vec<Output> = self.session.drain().collect();
            if outs.is_empty() {
                return;
            }
            for o in outs {
                match (o, &mut self.echo) {
                    (Output::Log(_), _) => {}
                    (Output::Deliver(msg), Some(app)) => {
                        let now = UtcTimestamp {
                            unix_nanos: self.now,
                        };
                        app.on_message(&mut self.session, Delivered::new(&msg), now)
                            .unwrap();
                    }
                    (o, _) => self.pending.push_back(o),
                }
            }
        }
    }

    fn next(&mut self, line: &str) -> Output {
        self.collect();
        match self.pending.pop_front() {
            Some(o) => o,
            None => panic!("{}: expected `{line}`, the session did nothing", self.name),
        }
    }

    fn step(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return;
        }
        let (cmd, arg) = line.split_once(' ').unwrap_or((line, ""));
        match cmd {
            "connect" => {
                let now = self.now();
                self.framer = Framer::new(1 << 20).session_cut();
                self.session.on_connect(now).unwrap();
            }
            "disconnect" => self.session.on_disconnect().unwrap(),
            ">" => {
                let msg = frame(arg, self.now);
                let now = self.now();
                self.framer.push(&msg);
                // As the connection does: what cannot be framed is
                // logged there and never reaches the session.
                while let Some(frame) = self.framer.next_frame() {
                    if let Ok(m) = frame {
                        self.session.on_message(m, now).unwrap();
                    }
                }
            }
            "<" => {
                let got = match self.next(line) {
                    Output::Send(b) => b,
                    other => panic!("{}: expected `{line}`, got {other:?}", self.name),
                };
                let got = fields_of(&got);
                let want: Vec<(String, String)> = arg
                    .split('|')
                    .filter(|f| !f.is_empty())
                    .map(|f| {
                        let (t, v) = f.split_once('=').unwrap();
                        (t.to_string(), v.to_string())
                    })
                    .collect();
                let got_no_len: Vec<&(String, String)> =
                    got.iter().filter(|(t, _)| t != "9").collect();
                let ok = got_no_len.len() == want.len()
                    && got_no_len.iter().zip(&want).all(|((gt, gv), (wt, wv))| {
                        gt == wt && (gv == wv || (wv == "TIME" && is_timestamp(gv)))
                    });
                assert!(
                    ok,
                    "{}: expected\n  {arg}\ngot\n  {}",
                    self.name,
                    got_no_len
                        .iter()
                        .map(|(t, v)| format!("{t}={v}"))
                        .collect::<Vec<_>>()
                        .join("|")
                );
            }
            "deliver" => {
                let n: u64 = arg.parse().unwrap();
                match self.next(line) {
                    Output::Deliver(b) => {
                        let f = fields_of(&b);
                        let seq = f.iter().find(|(t, _)| t == "34").unwrap();
                        assert_eq!(seq.1, n.to_string(), "{}: delivered", self.name);
                    }
                    other => panic!("{}: expected `{line}`, got {other:?}", self.name),
                }
            }
            "logged-on" | "logged-out" | "disconnected" => {
                let want = match cmd {
                    "logged-on" => Output::LoggedOn,
                    "logged-out" => Output::LoggedOut,
                    _ => Output::Disconnect,
                };
                let got = self.next(line);
                assert_eq!(got, want, "{}: `{line}`", self.name);
            }
            "app" => {
                // Our application sends a message: `app TYPE|fields`.
                let (msg_type, body) = arg.split_once('|').unwrap_or((arg, ""));
                let now = self.now();
                let fields: Vec<(u32, String)> = body
                    .split('|')
                    .filter(|f| !f.is_empty())
                    .map(|f| {
                        let (t, v) = f.split_once('=').unwrap();
                        (t.parse().unwrap(), v.to_string())
                    })
                    .collect();
                let sent = self
                    .session
                    .send_app(msg_type.as_bytes(), now, |b| {
                        for (t, v) in &fields {
                            b.field_str(*t, v);
                        }
                    })
                    .unwrap();
                assert!(sent, "{}: `{line}` refused", self.name);
            }
            "wait" => {
                let secs: i64 = arg.parse().unwrap();
                self.now += secs * 1_000_000_000;
                let now = self.now();
                self.session.on_tick(now).unwrap();
            }
            "seqs" => {
                self.collect();
                let (s, t) = arg.split_once(' ').unwrap();
                let st = self.session.store();
                assert_eq!(
                    (st.next_sender_seq(), st.next_target_seq()),
                    (s.parse().unwrap(), t.parse().unwrap()),
                    "{}: `{line}`",
                    self.name
                );
            }
            _ => panic!("{}: unknown step `{line}`", self.name),
        }
    }

    fn run(mut self, steps: &str) {
        for line in steps.lines() {
            self.step(line);
        }
        self.collect();
        assert!(
            self.pending.is_empty(),
            "{}: unexpected output after the script: {:?}",
            self.name,
            self.pending
        );
    }
}

/// `steps` for `bs`: `{BS}` is the BeginString, `{APPL}` the
/// DefaultApplVerID field a FIXT.1.1 Logon must carry (nothing before).
fn expand(steps: &str, bs: BeginString) -> String {
    let appl = if bs == BeginString::Fixt11 {
        "1137=9|"
    } else {
        ""
    };
    steps.replace("{BS}", bs.as_str()).replace("{APPL}", appl)
}

/// Runs `steps` against an acceptor for each of `versions`.
fn acceptor(name: &str, versions: &[BeginString], steps: &str) {
    for &bs in versions {
        let s = expand(steps, bs);
        Script::new(
            &format!("{name} ({})", bs.as_str()),
            config(bs, Role::Acceptor),
        )
        .run(&s);
    }
}

const ALL: &[BeginString] = &[
    BeginString::Fix40,
    BeginString::Fix41,
    BeginString::Fix42,
    BeginString::Fix43,
    BeginString::Fix44,
    BeginString::Fixt11,
];
const FROM_42: &[BeginString] = &[
    BeginString::Fix42,
    BeginString::Fix43,
    BeginString::Fix44,
    BeginString::Fixt11,
];

/// The Logon every acceptor script starts with.
const LOGON: &str = "
connect
> 8={BS}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|{APPL}
< 8={BS}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108=30|{APPL}
logged-on
";

#[test]
fn valid_logon_is_answered_and_numbers_advance() {
    acceptor("1a valid logon", ALL, &format!("{LOGON}\nseqs 2 2"));
}

#[test]
fn a_first_message_that_is_not_a_logon_disconnects() {
    acceptor(
        "1e not a logon",
        ALL,
        "connect
         > 8={BS}|35=0|34=1|49=TW|52=NOW|56=ISLD|
         disconnected
         seqs 1 1",
    );
}

#[test]
fn a_logon_with_the_wrong_comp_id_is_dropped_unanswered() {
    acceptor(
        "1c wrong CompID",
        FROM_42,
        // QuickFIX sends no Reject before the Logon is accepted: it drops
        // the connection (1c_InvalidTargetCompID).
        "connect
         > 8={BS}|35=A|34=1|49=TW|52=NOW|56=WRONG|98=0|108=30|{APPL}
         disconnected
         seqs 1 1",
    );
}

#[test]
fn heartbeats_flow_on_silence_and_a_test_request_is_answered() {
    acceptor(
        "2a heartbeat and test request",
        ALL,
        &format!(
            "{LOGON}
             wait 30
             < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|
             > 8={{BS}}|35=1|34=2|49=TW|52=NOW|56=ISLD|112=HELLO|
             < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|112=HELLO|
             seqs 4 3"
        ),
    );
}

#[test]
fn a_silent_peer_gets_a_test_request_then_is_disconnected() {
    acceptor(
        "silent peer",
        ALL,
        &format!(
            "{LOGON}
             wait 30
             < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|
             wait 6
             < 8={{BS}}|35=1|34=3|49=ISLD|52=TIME|56=TW|112=TEST|
             wait 36
             disconnected"
        ),
    );
}

#[test]
fn a_gap_is_asked_for_and_queued_messages_follow_the_fill_in_order() {
    acceptor(
        "2b too high, queued, gap filled",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=D|34=4|49=TW|52=NOW|56=ISLD|11=C4|
             < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=2|16=0|
             > 8={{BS}}|35=D|34=5|49=TW|52=NOW|56=ISLD|11=C5|
             > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|43=Y|122=NOW-1|11=C2|
             deliver 2
             > 8={{BS}}|35=4|34=3|49=TW|52=NOW|56=ISLD|43=Y|122=NOW-1|123=Y|36=4|
             deliver 4
             deliver 5
             seqs 3 6"
        ),
    );
}

#[test]
fn a_number_too_low_without_poss_dup_ends_the_session() {
    acceptor(
        "2c too low",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=0|34=1|49=TW|52=NOW|56=ISLD|
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|58=MsgSeqNum too low, expecting 2 but received 1|
             disconnected"
        ),
    );
}

#[test]
fn a_poss_dup_below_the_expected_number_is_ignored() {
    acceptor(
        "2e poss dup too low",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=D|34=1|49=TW|52=NOW|56=ISLD|43=Y|122=NOW-5|11=X|
             seqs 2 2"
        ),
    );
}

#[test]
fn a_resend_request_is_served_with_gap_fills_for_admin_messages() {
    acceptor(
        "8 resend request",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=2|34=2|49=TW|52=NOW|56=ISLD|7=1|16=0|
             < 8={{BS}}|35=4|34=1|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36=2|123=Y|
             seqs 2 3"
        ),
    );
}

#[test]
fn sequence_reset_moves_the_expected_number_and_never_back() {
    acceptor(
        "11 sequence reset",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=4|34=5|49=TW|52=NOW|56=ISLD|36=20|
             seqs 2 20
             > 8={{BS}}|35=4|34=20|49=TW|52=NOW|56=ISLD|36=10|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=20|58=Value is incorrect (out of range) for this tag|372=4|373=5|
             seqs 3 20"
        ),
    );
}

#[test]
fn the_logout_handshake_from_the_peer() {
    acceptor(
        "logout",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=5|34=2|49=TW|52=NOW|56=ISLD|
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|
             logged-out
             disconnected
             seqs 3 3"
        ),
    );
}

#[test]
fn a_garbled_message_is_dropped_without_using_a_number() {
    acceptor(
        "garbled",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             seqs 2 3"
        ),
    );
    // The same heartbeat with a wrong checksum: nothing happens.
    let mut s = Script::new(
        "garbled checksum",
        config(BeginString::Fix44, Role::Acceptor),
    );
    for l in expand(LOGON, BeginString::Fix44).lines() {
        s.step(l);
    }
    let mut msg = frame("8=FIX.4.4|35=0|34=2|49=TW|52=NOW|56=ISLD|", T0);
    let n = msg.len();
    msg[n - 2] = if msg[n - 2] == b'9' {
        b'0'
    } else {
        msg[n - 2] + 1
    };
    let now = s.now();
    s.session.on_message(&msg, now).unwrap();
    s.step("seqs 2 2");
    s.run("");
}

#[test]
fn sending_time_far_from_the_clock_is_rejected() {
    acceptor(
        "sending time",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW-200|56=ISLD|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=SendingTime accuracy problem|372=0|373=10|
             < 8={{BS}}|35=5|34=3|49=ISLD|52=TIME|56=TW|"
        ),
    );
}

/// Runs `steps` against an initiator (we are TW, the peer ISLD).
fn initiator(name: &str, versions: &[BeginString], steps: &str) {
    for &bs in versions {
        Script::new(
            &format!("{name} ({})", bs.as_str()),
            config(bs, Role::Initiator),
        )
        .run(&expand(steps, bs));
    }
}

#[test]
fn an_initiator_logs_on_and_out() {
    initiator(
        "initiator logon",
        ALL,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|{APPL}
         logged-on
         seqs 2 2
         > 8={BS}|35=D|34=2|49=ISLD|52=NOW|56=TW|11=A|
         deliver 2",
    );
}

#[test]
fn an_initiator_gives_up_when_no_logon_reply_comes() {
    initiator(
        "logon timeout",
        ALL,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
         wait 9
         wait 1
         disconnected",
    );
}

#[test]
fn a_logon_with_reset_seq_num_flag_starts_both_sides_at_one() {
    acceptor(
        "reset on logon flag",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|11=A|
             deliver 3
             seqs 2 4
             disconnect
             connect
             > 8={{BS}}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|{{APPL}}
             < 8={{BS}}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108=30|141=Y|{{APPL}}
             logged-on
             seqs 2 2"
        ),
    );
}

#[test]
fn a_logon_ahead_of_the_expected_number_is_answered_then_the_gap_asked_for() {
    acceptor(
        "logon too high",
        FROM_42,
        "connect
         > 8={BS}|35=A|34=5|49=TW|52=NOW|56=ISLD|98=0|108=30|{APPL}
         < 8={BS}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108=30|{APPL}
         logged-on
         < 8={BS}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=1|16=0|
         > 8={BS}|35=4|34=1|49=TW|52=NOW|56=ISLD|43=Y|122=NOW-1|123=Y|36=6|
         seqs 3 6",
    );
}

#[test]
fn before_fix_4_2_a_resend_request_runs_to_999999() {
    acceptor(
        "resend request 4.0/4.1",
        &[BeginString::Fix40, BeginString::Fix41],
        &format!(
            "{LOGON}
             > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|11=C3|
             < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=2|16=999999|"
        ),
    );
}

#[test]
fn before_fix_4_2_a_reject_names_the_tag_in_its_text() {
    // A PossDup resend without OrigSendingTime(122): Reject, number kept.
    acceptor(
        "reject 4.0/4.1",
        &[BeginString::Fix40, BeginString::Fix41],
        &format!(
            "{LOGON}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|43=Y|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Required tag missing (122)|
             seqs 3 3"
        ),
    );
}

#[test]
fn a_second_logon_on_a_live_session_disconnects() {
    acceptor(
        "logon twice",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=A|34=2|49=TW|52=NOW|56=ISLD|98=0|108=30|{{APPL}}
             disconnected"
        ),
    );
}

#[test]
fn our_logout_waits_for_the_reply_then_times_out() {
    let mut s = Script::new("logout timeout", config(BeginString::Fix44, Role::Acceptor));
    for l in expand(LOGON, BeginString::Fix44).lines() {
        s.step(l);
    }
    let now = s.now();
    s.session.logout(Some("bye"), now).unwrap();
    s.run(
        "< 8=FIX.4.4|35=5|34=2|49=ISLD|52=TIME|56=TW|58=bye|
         wait 1
         wait 1
         disconnected",
    );
}

#[test]
fn our_logout_is_answered_and_the_session_ends() {
    let mut s = Script::new(
        "logout answered",
        config(BeginString::Fix42, Role::Acceptor),
    );
    for l in expand(LOGON, BeginString::Fix42).lines() {
        s.step(l);
    }
    let now = s.now();
    s.session.logout(None, now).unwrap();
    s.run(
        "< 8=FIX.4.2|35=5|34=2|49=ISLD|52=TIME|56=TW|
         > 8=FIX.4.2|35=5|34=2|49=TW|52=NOW|56=ISLD|
         logged-out
         disconnected
         seqs 3 3",
    );
}

#[test]
fn application_messages_are_resent_with_poss_dup_and_their_original_time() {
    let mut s = Script::new("resend app", config(BeginString::Fix44, Role::Acceptor));
    for l in expand(LOGON, BeginString::Fix44).lines() {
        s.step(l);
    }
    let now = s.now();
    let sent = s
        .session
        .send_app(b"8", now, |b| {
            b.field_str(37, "O1").field_str(17, "E1");
        })
        .unwrap();
    assert!(sent);
    let first = match s.next("the ExecutionReport") {
        Output::Send(b) => fields_of(&b),
        other => panic!("{other:?}"),
    };
    let orig = first.iter().find(|(t, _)| t == "52").unwrap().1.clone();
    s.now += 5_000_000_000;
    s.run(&format!(
        "> 8=FIX.4.4|35=2|34=2|49=TW|52=NOW|56=ISLD|7=1|16=0|
         < 8=FIX.4.4|35=4|34=1|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36=2|123=Y|
         < 8=FIX.4.4|35=8|34=2|43=Y|49=ISLD|52=TIME|56=TW|122={orig}|37=O1|17=E1|
         seqs 3 3"
    ));
}

#[test]
fn an_unsupported_application_message_gets_a_business_reject() {
    let mut s = Script::new("unsupported", config(BeginString::Fix44, Role::Acceptor));
    for l in expand(LOGON, BeginString::Fix44).lines() {
        s.step(l);
    }
    s.step("> 8=FIX.4.4|35=ZZ|34=2|49=TW|52=NOW|56=ISLD|");
    let msg = match s.next("deliver") {
        Output::Deliver(b) => b,
        other => panic!("{other:?}"),
    };
    let now = s.now();
    s.session.reject_unsupported(&msg, now).unwrap();
    s.run(
        "< 8=FIX.4.4|35=j|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Unsupported Message Type|372=ZZ|380=3|
         seqs 3 3",
    );
}

/// Before FIX 4.2 there is no BusinessMessageReject: the echo's
/// unsupported type gets a Reject(3) whose Text says so, with no reason
/// code (QuickFIX's generateReject(message, "Unsupported message type")).
#[test]
fn before_fix_4_2_an_unsupported_type_gets_a_reject_with_text() {
    for bs in [BeginString::Fix40, BeginString::Fix41] {
        let steps = expand(
            &format!(
                "{LOGON}
                 > 8={{BS}}|35=8|34=2|49=TW|52=NOW|56=ISLD|37=id|17=id|20=0|39=0|55=WLRI|54=1|14=0|6=0.0|
                 < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Unsupported message type|
                 seqs 3 3"
            ),
            bs,
        );
        Script::new("unsupported 4.0/4.1", config(bs, Role::Acceptor))
            .echo()
            .run(&steps);
    }
}

#[test]
fn without_a_dictionary_repeated_tags_and_unknown_groups_are_delivered() {
    // A list order's NoOrders(73) group repeats ClOrdID(11): the session
    // layer passes it on, as QuickFIX does when it has no dictionary.
    acceptor(
        "unknown group",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=E|34=2|49=TW|52=NOW|56=ISLD|66=L1|68=2|73=2|11=A|67=1|55=X|11=B|67=2|55=Y|
             deliver 2
             seqs 2 3"
        ),
    );
}

/// QuickFIX 1.15.1's dictionary `file` (see [`quickfix_spec`]).
fn spec(file: &str) -> Option<std::sync::Arc<fixcore::dictionary::DataDictionary>> {
    let path = quickfix_spec()?.join(file);
    let xml = std::fs::read_to_string(path).unwrap();
    Some(std::sync::Arc::new(
        fixcore::dictionary::DataDictionary::parse(&xml).unwrap(),
    ))
}

/// An acceptor validating with QuickFIX's own dictionary for `bs`.
fn validating(name: &str, bs: BeginString, file: &str, steps: &str) {
    let Some(dict) = spec(file) else { return };
    let mut cfg = config(bs, Role::Acceptor);
    cfg.validator = Some(std::sync::Arc::new(
        fixcore::dictionary::validate::Validator::new(
            dict.clone(),
            dict,
            fixcore::settings::Validation::default(),
        ),
    ));
    let s = expand(&format!("{LOGON}{steps}"), bs);
    Script::new(&format!("{name} ({})", bs.as_str()), cfg).run(&s);
}

/// A NewOrderSingle body valid in FIX 4.2 and 4.4.
const NOS: &str = "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00|38=100|40=1|";

#[test]
fn dictionary_rejects_name_the_reason_and_tag_and_use_up_the_number() {
    for (bs, file) in [
        (BeginString::Fix44, "FIX44.xml"),
        (BeginString::Fix42, "FIX42.xml"),
    ] {
        validating(
            "valid order",
            bs,
            file,
            &format!("> 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{NOS}\ndeliver 2"),
        );
        let cases: [(&str, &str, &str); 6] = [
            (
                "21=1|55=MSFT|54=1|60=20261123-12:00:00|38=100|40=1|",
                "58=Required tag missing|371=11|372=D|373=1",
                "1",
            ),
            (
                "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00|38=100|40=1|58=|",
                "58=Tag specified without a value|371=58|372=D|373=4",
                "4",
            ),
            (
                "11=ID|21=1|55=MSFT|54=Z|60=20261123-12:00:00|38=100|40=1|",
                "58=Value is incorrect (out of range) for this tag|371=54|372=D|373=5",
                "5",
            ),
            (
                "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00|38=1x|40=1|",
                "58=Incorrect data format for value|371=38|372=D|373=6",
                "6",
            ),
            (
                "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00|38=100|40=1|7=1|",
                "58=Tag not defined for this message type|371=7|372=D|373=2",
                "2",
            ),
            (
                "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00|38=100|40=1|4999=1|",
                "58=Invalid tag number|371=4999|372=D|373=0",
                "0",
            ),
        ];
        for (body, reject, name) in cases {
            validating(
                &format!("reject {name}"),
                bs,
                file,
                &format!(
                    "> 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{body}
                     < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|{reject}|
                     seqs 3 3"
                ),
            );
        }
    }
}

#[test]
fn fix_4_2_rejects_carry_no_reason_above_11_but_fix_4_4_ones_do() {
    let repeated = "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00|38=100|40=1|11=ID|";
    validating(
        "repeated tag 4.2",
        BeginString::Fix42,
        "FIX42.xml",
        &format!(
            "> 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{repeated}
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Tag appears more than once|371=11|372=D|"
        ),
    );
    validating(
        "repeated tag 4.4",
        BeginString::Fix44,
        "FIX44.xml",
        &format!(
            "> 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{repeated}
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Tag appears more than once|371=11|372=D|373=13|"
        ),
    );
    validating(
        "group count 4.4",
        BeginString::Fix44,
        "FIX44.xml",
        "> 8={BS}|35=D|34=2|49=TW|52=NOW|56=ISLD|11=ID|453=2|448=P|447=D|452=1|21=1|55=MSFT|54=1|60=20261123-12:00:00|38=100|40=1|
         < 8={BS}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Incorrect NumInGroup count for repeating group|371=453|372=D|373=16|",
    );
    validating(
        "invalid msg type 4.4",
        BeginString::Fix44,
        "FIX44.xml",
        "> 8={BS}|35=ZZ|34=2|49=TW|52=NOW|56=ISLD|
         < 8={BS}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Invalid MsgType|372=ZZ|373=11|",
    );
}

// Scenarios after QuickFIX's acceptance definitions (test/definitions/
// server), expected messages in QuickFIX's field order.

#[test]
fn poss_dup_with_orig_sending_time_after_sending_time_is_rejected_and_logged_out() {
    acceptor(
        "2f OrigSendingTime too high",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|11=A|
             deliver 2
             > 8={{BS}}|35=D|34=2|49=TW|52=NOW-10|56=ISLD|43=Y|122=NOW|11=A|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=SendingTime accuracy problem|372=D|373=10|
             < 8={{BS}}|35=5|34=3|49=ISLD|52=TIME|56=TW|
             wait 2
             disconnected"
        ),
    );
}

#[test]
fn poss_dup_without_orig_sending_time_is_rejected_and_the_number_kept() {
    acceptor(
        "2g no OrigSendingTime",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|11=A|
             deliver 2
             > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|43=Y|11=A|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Required tag missing|371=122|372=D|373=1|
             > 8={{BS}}|35=1|34=3|49=TW|52=NOW|56=ISLD|112=T|
             < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|112=T|
             seqs 4 4"
        ),
    );
}

#[test]
fn an_unexpected_begin_string_gets_a_logout_then_the_connection_ends() {
    for (bs, other) in [
        (BeginString::Fix42, "FIX.4.4"),
        (BeginString::Fix44, "FIX.4.2"),
    ] {
        let steps = format!(
            "{LOGON}
             > 8={other}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|58=Incorrect BeginString|
             wait 2
             disconnected"
        );
        Script::new("2i BeginString", config(bs, Role::Acceptor)).run(&expand(&steps, bs));
    }
}

#[test]
fn a_comp_id_that_does_not_match_after_logon_is_rejected_and_logged_out() {
    acceptor(
        "2k CompID",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=D|34=2|49=EVE|52=NOW|56=ISLD|11=A|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=CompID problem|372=D|373=9|
             < 8={{BS}}|35=5|34=3|49=ISLD|52=TIME|56=TW|
             > 8={{BS}}|35=5|34=3|49=TW|52=NOW|56=ISLD|
             logged-out
             disconnected"
        ),
    );
}

#[test]
fn a_sequence_reset_lower_than_expected_is_rejected_without_a_tag() {
    acceptor(
        "11c NewSeqNo less",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             > 8={{BS}}|35=4|34=0|49=TW|52=NOW|56=ISLD|36=1|123=N|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=0|58=Value is incorrect (out of range) for this tag|372=4|373=5|
             seqs 3 3"
        ),
    );
}

#[test]
fn a_received_reject_only_uses_its_number() {
    acceptor(
        "7 receive Reject",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=3|34=2|49=TW|52=NOW|56=ISLD|45=1|
             seqs 2 3"
        ),
    );
}

#[test]
fn a_gap_fill_below_the_expected_number_is_ignored_with_poss_dup_and_ends_the_session_without() {
    acceptor(
        "10 MsgSeqNum less",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             > 8={{BS}}|35=4|34=1|49=TW|52=NOW|56=ISLD|43=Y|122=NOW|123=Y|36=2|
             seqs 2 3
             > 8={{BS}}|35=4|34=1|49=TW|52=NOW|56=ISLD|123=Y|36=2|
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|58=MsgSeqNum too low, expecting 3 but received 1|
             disconnected"
        ),
    );
}

#[test]
fn only_admin_messages_are_resent_as_one_gap_fill() {
    acceptor(
        "8 only admin",
        FROM_42,
        &format!(
            "{LOGON}
             wait 30
             < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             wait 30
             < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|
             > 8={{BS}}|35=0|34=3|49=TW|52=NOW|56=ISLD|
             > 8={{BS}}|35=2|34=4|49=TW|52=NOW|56=ISLD|7=1|16=3|
             < 8={{BS}}|35=4|34=1|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36=4|123=Y|
             > 8={{BS}}|35=2|34=5|49=TW|52=NOW|56=ISLD|7=2|16=0|
             < 8={{BS}}|35=4|34=2|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36=4|123=Y|
             seqs 4 6"
        ),
    );
}

#[test]
fn a_resend_request_out_of_sequence_is_served_and_not_counted() {
    acceptor(
        "resend request too high",
        FROM_42,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=2|34=9|49=TW|52=NOW|56=ISLD|7=1|16=0|
             < 8={{BS}}|35=4|34=1|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36=2|123=Y|
             seqs 2 2"
        ),
    );
}

#[test]
fn a_group_count_of_zero_with_no_entries_is_valid() {
    validating(
        "21 group of zero",
        BeginString::Fix44,
        "FIX44.xml",
        "> 8={BS}|35=D|34=2|49=TW|52=NOW|56=ISLD|11=ID|453=0|21=1|55=MSFT|54=1|60=20261123-12:00:00|38=100|40=1|
         deliver 2",
    );
}

#[test]
fn before_the_logon_only_sequence_resets_and_rejects_are_taken() {
    // QuickFIX's validLogonState: a Heartbeat first drops the connection,
    // a Reject is taken (and numbered) before any Logon.
    acceptor(
        "logon state",
        FROM_42,
        "connect
         > 8={BS}|35=3|34=1|49=TW|52=NOW|56=ISLD|45=1|
         seqs 1 2
         > 8={BS}|35=A|34=2|49=TW|52=NOW|56=ISLD|98=0|108=30|{APPL}
         < 8={BS}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108=30|{APPL}
         logged-on
         seqs 2 3",
    );
}

#[test]
fn a_fixt_logon_without_default_appl_ver_id_is_dropped() {
    let steps = "connect
         > 8=FIXT.1.1|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|
         disconnected";
    Script::new("FIXT no 1137", config(BeginString::Fixt11, Role::Acceptor)).run(steps);
}

#[test]
fn extreme_numbers_from_the_peer_are_handled_not_overflowed() {
    // A HeartBtInt past any clock, a SendingTime in 1677, a SequenceReset
    // to the last u64: each is answered by the rules, none panics.
    acceptor(
        "huge HeartBtInt",
        &[BeginString::Fix44],
        "connect
         > 8={BS}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=18446744073709551615|
         < 8={BS}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108=18446744073709551615|
         logged-on
         wait 100000
         > 8={BS}|35=0|34=2|49=TW|52=16780101-00:00:00|56=ISLD|
         < 8={BS}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=SendingTime accuracy problem|372=0|373=10|
         < 8={BS}|35=5|34=3|49=ISLD|52=TIME|56=TW|",
    );
    // A number at the top of the range is refused, never counted past:
    // Reject (value out of range) and Logout, nothing delivered.
    let top = u64::MAX;
    let max = u64::MAX - 1;
    acceptor(
        "SequenceReset to u64::MAX",
        &[BeginString::Fix44],
        &format!(
            "{LOGON}
             > 8={{BS}}|35=4|34=2|49=TW|52=NOW|56=ISLD|36={top}|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=NewSeqNo(36) {top} is above {max}, the largest sequence number this session records|371=36|372=4|373=5|
             < 8={{BS}}|35=5|34=3|49=ISLD|52=TIME|56=TW|58=NewSeqNo(36) {top} is above {max}, the largest sequence number this session records|
             disconnected
             seqs 4 2"
        ),
    );
    acceptor(
        "MsgSeqNum u64::MAX",
        &[BeginString::Fix44],
        &format!(
            "{LOGON}
             > 8={{BS}}|35=D|34={top}|49=TW|52=NOW|56=ISLD|{NOS}
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45={top}|58=MsgSeqNum(34) {top} is above {max}, the largest sequence number this session records|371=34|372=D|373=5|
             < 8={{BS}}|35=5|34=3|49=ISLD|52=TIME|56=TW|58=MsgSeqNum(34) {top} is above {max}, the largest sequence number this session records|
             disconnected
             seqs 4 2"
        ),
    );
    // Reset to the largest number: the first order there is delivered,
    // the next two (numbered the same) are too low. One delivery at most.
    acceptor(
        "SequenceReset to the largest number, then three orders under it",
        &[BeginString::Fix44],
        &format!(
            "{LOGON}
             > 8={{BS}}|35=4|34=2|49=TW|52=NOW|56=ISLD|36={max}|
             seqs 2 {max}
             > 8={{BS}}|35=D|34={max}|49=TW|52=NOW|56=ISLD|{NOS}
             deliver {max}
             > 8={{BS}}|35=D|34={max}|49=TW|52=NOW|56=ISLD|{NOS}
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|58=MsgSeqNum too low, expecting {top} but received {max}|
             disconnected"
        ),
    );
}

// Scenarios after more of QuickFIX 1.15.1's acceptance definitions
// (test/definitions/server/{fix42,fix44,fix50sp2}), run as its acceptance
// configuration runs them: ResetOnLogon=Y, the echo application, and
// QuickFIX's dictionaries where the definition needs validation.

/// The three protocols the issue names.
const V3: &[BeginString] = &[BeginString::Fix42, BeginString::Fix44, BeginString::Fixt11];

/// An order as the definitions send it, and as the echo returns it (in
/// tag order, which it already is).
const ORDER: &str = "11=ID|21=3|40=1|54=1|55=INTC|60=20261123-12:00:00|";

/// The Logon exchange with HeartBtInt `hb`.
fn logon(hb: u32) -> String {
    format!(
        "connect
         > 8={{BS}}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108={hb}|{{APPL}}
         < 8={{BS}}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108={hb}|{{APPL}}
         logged-on
"
    )
}

/// The peer's Logout numbered `theirs`, answered with ours numbered
/// `ours`, and the end of the connection.
fn peer_logout(theirs: u64, ours: u64) -> String {
    format!(
        "> 8={{BS}}|35=5|34={theirs}|49=TW|52=NOW|56=ISLD|
         < 8={{BS}}|35=5|34={ours}|49=ISLD|52=TIME|56=TW|
         logged-out
         disconnected
"
    )
}

/// The acceptance suite's session for `bs`: ResetOnLogon=Y.
fn acceptance_config(bs: BeginString) -> Config {
    let mut cfg = config(bs, Role::Acceptor);
    cfg.reset_on_logon = true;
    cfg
}

/// Runs `steps` against the acceptance suite's session with the echo
/// application, for each of `versions`.
fn echo_acceptor(name: &str, versions: &[BeginString], steps: &str) {
    for &bs in versions {
        Script::new(&format!("{name} ({})", bs.as_str()), acceptance_config(bs))
            .echo()
            .run(&expand(steps, bs));
    }
}

/// QuickFIX's dictionaries for `bs`: the session one and the application
/// one (the same file before FIXT.1.1).
fn dictionaries(
    bs: BeginString,
) -> Option<(
    std::sync::Arc<fixcore::dictionary::DataDictionary>,
    std::sync::Arc<fixcore::dictionary::DataDictionary>,
)> {
    Some(match bs {
        BeginString::Fixt11 => (spec("FIXT11.xml")?, spec("FIX50SP2.xml")?),
        BeginString::Fix42 => (spec("FIX42.xml")?, spec("FIX42.xml")?),
        BeginString::Fix44 => (spec("FIX44.xml")?, spec("FIX44.xml")?),
        other => panic!("no dictionary set up for {}", other.as_str()),
    })
}

/// `echo_acceptor` with QuickFIX's dictionaries validating every message.
fn validating_echo(name: &str, versions: &[BeginString], steps: &str) {
    for &bs in versions {
        let Some((session, app)) = dictionaries(bs) else {
            return;
        };
        let mut cfg = acceptance_config(bs);
        cfg.validator = Some(std::sync::Arc::new(
            fixcore::dictionary::validate::Validator::new(
                session,
                app,
                fixcore::settings::Validation::default(),
            ),
        ));
        Script::new(&format!("{name} ({})", bs.as_str()), cfg)
            .echo()
            .run(&expand(steps, bs));
    }
}

/// 2a_MsgSeqNumCorrect.def: messages numbered in sequence are taken
/// silently; the Logout is answered with the next number of ours.
#[test]
fn messages_numbered_in_sequence_are_taken_silently() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
         > 8={{BS}}|35=0|34=3|49=TW|52=NOW|56=ISLD|
         > 8={{BS}}|35=0|34=4|49=TW|52=NOW|56=ISLD|
         > 8={{BS}}|35=0|34=5|49=TW|52=NOW|56=ISLD|
         {}",
        logon(30),
        peer_logout(6, 2)
    );
    echo_acceptor("2a MsgSeqNum correct", ALL, &steps);
}

/// 2d_GarbledMessage.def: a garbled heartbeat and a garbled order are
/// ignored without using a number; the order's number is then asked for
/// and the order processed when it comes.
#[test]
fn garbled_messages_are_ignored_and_their_numbers_asked_for_again() {
    let steps = format!(
        "{}
         > 8={{BS}}|9=52|35=0|34=2|4garbled9=TW|52=NOW|56=ISLD|10=0|
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
         > 8={{BS}}|9=81|35=D|34=3|49garbled=TW|52=NOW|56=ISLD|11=ID|21=3|40=1|54=1|55=INTC|10=0|
         > 8={{BS}}|35=0|34=4|49=TW|52=NOW|56=ISLD|
         < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=3|16=0|
         > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|{ORDER}
         < 8={{BS}}|35=D|34=3|49=ISLD|52=TIME|56=TW|{ORDER}
         {}",
        logon(30),
        peer_logout(5, 4)
    );
    echo_acceptor("2d garbled", V3, &steps);
}

/// 3c_GarbledMessage.def: the same with other garbling (a broken tag in
/// the header), and the order resent with OrigSendingTime but without
/// PossDupFlag.
#[test]
fn garbled_header_tags_are_ignored_like_garbled_frames() {
    let steps = format!(
        "{}
         > 8={{BS}}|9=52|35=0|34=2|4garbled9=TW|52=NOW|56=ISLD|10=0|
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
         > 8={{BS}}|9=81|35=D|34=3|49garbled=TW|52=NOW|56=ISLD|11=ID|21=3|40=1|54=1|55=INTC|10=0|
         > 8={{BS}}|35=0|34=4|49=TW|52=NOW|56=ISLD|
         < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=3|16=0|
         > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|122=NOW|11=ID|21=3|38=100|40=1|54=1|55=INTC|60=20261123-12:00:00|
         < 8={{BS}}|35=D|34=3|49=ISLD|52=TIME|56=TW|11=ID|21=3|38=100|40=1|54=1|55=INTC|60=20261123-12:00:00|
         {}",
        logon(30),
        peer_logout(5, 4)
    );
    echo_acceptor("3c garbled", V3, &steps);
}

/// 3b_InvalidChecksum.def: a message whose CheckSum is wrong is ignored
/// without using a number.
#[test]
fn a_wrong_checksum_is_ignored_without_using_a_number() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|10=256|
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
         > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|11=ID|21=3|40=1|54=1|55=INTC|10=256|
         > 8={{BS}}|35=0|34=4|49=TW|52=NOW|56=ISLD|
         < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=3|16=0|
         > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|{ORDER}
         < 8={{BS}}|35=D|34=3|49=ISLD|52=TIME|56=TW|{ORDER}
         {}",
        logon(30),
        peer_logout(5, 4)
    );
    echo_acceptor("3b checksum", V3, &steps);
}

/// 2t_FirstThreeFieldsOutOfOrder.def: a message whose first three fields
/// are not BeginString, BodyLength, MsgType is ignored, its number unused.
#[test]
fn a_message_whose_first_three_fields_are_out_of_order_is_ignored() {
    let steps = format!(
        "{}
         > 35=0|8={{BS}}|9=29|34=2|49=TW|52=NOW|56=ISLD|10=121|
         > 8={{BS}}|35=1|34=2|49=TW|52=NOW|56=ISLD|112=HELLO|
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=HELLO|
         > 8={{BS}}|34=3|35=0|49=TW|52=NOW|56=ISLD|
         > 8={{BS}}|35=1|34=3|49=TW|52=NOW|56=ISLD|112=HELLO|
         < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|112=HELLO|
         {}",
        logon(30),
        peer_logout(4, 4)
    );
    echo_acceptor("2t first three fields", V3, &steps);
}

/// 2o_SendingTimeValueOutOfRange.def: a SendingTime 121 seconds early, and
/// (on a new connection) 121 seconds late, is rejected and the session
/// logged out; the peer's Logout completes it.
#[test]
fn sending_time_two_minutes_early_or_late_is_rejected_and_logged_out() {
    let mut steps = String::new();
    for shift in ["-121", "+121"] {
        steps += &format!(
            "{}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW{shift}|56=ISLD|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=SendingTime accuracy problem|372=0|373=10|
             < 8={{BS}}|35=5|34=3|49=ISLD|52=TIME|56=TW|
             > 8={{BS}}|35=5|34=3|49=TW|52=NOW|56=ISLD|
             logged-out
             disconnected
             ",
            logon(30)
        );
    }
    echo_acceptor("2o sending time", V3, &steps);
}

/// 2q_MsgTypeNotValid.def: a MsgType the dictionary does not define is
/// rejected with reason 11.
#[test]
fn an_invalid_msg_type_is_rejected_with_reason_11() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=*|34=2|49=TW|52=NOW|56=ISLD|
         < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Invalid MsgType|372=*|373=11|
         {}",
        logon(30),
        peer_logout(3, 3)
    );
    validating_echo("2q invalid MsgType", V3, &steps);
}

/// 4a_NoDataSentDuringHeartBtInt.def: with HeartBtInt=6 and nothing to
/// send, a Heartbeat goes out every 6 seconds.
#[test]
fn a_quiet_session_sends_heartbeats_every_interval() {
    let steps = format!(
        "{}
         wait 5
         wait 1
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
         wait 6
         < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|
         > 8={{BS}}|35=0|34=3|49=TW|52=NOW|56=ISLD|
         {}",
        logon(6),
        peer_logout(4, 4)
    );
    echo_acceptor("4a heartbeats", V3, &steps);
}

/// 4b_ReceivedTestRequest.def: a TestRequest is answered at once by a
/// Heartbeat carrying its TestReqID.
#[test]
fn a_test_request_is_answered_with_its_id() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=1|34=2|49=TW|52=NOW|56=ISLD|112=HELLO|
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=HELLO|
         {}",
        logon(30),
        peer_logout(3, 3)
    );
    echo_acceptor("4b test request", V3, &steps);
}

/// 6_SendTestRequest.def: HeartBtInt=6; heartbeats while the peer
/// answers, a TestRequest "TEST" once it has been quiet for 1.2
/// intervals, and a disconnect once quiet for 2.4.
#[test]
fn a_test_request_goes_out_after_1_2_intervals_and_2_4_disconnect() {
    let steps = format!(
        "{}
         wait 6
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
         wait 6
         < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|
         wait 1
         wait 1
         < 8={{BS}}|35=1|34=4|49=ISLD|52=TIME|56=TW|112=TEST|
         > 8={{BS}}|35=0|34=3|49=TW|52=NOW|56=ISLD|112=TEST|
         wait 6
         < 8={{BS}}|35=0|34=5|49=ISLD|52=TIME|56=TW|
         > 8={{BS}}|35=0|34=4|49=TW|52=NOW|56=ISLD|
         wait 6
         < 8={{BS}}|35=0|34=6|49=ISLD|52=TIME|56=TW|
         wait 1
         wait 1
         < 8={{BS}}|35=1|34=7|49=ISLD|52=TIME|56=TW|112=TEST|
         wait 6
         wait 1
         wait 1
         disconnected",
        logon(6)
    );
    echo_acceptor("6 test request", V3, &steps);
}

/// The resend part of 8_AdminAndApplicationMessages.def: admin messages
/// 2-4 and 7-8 become gap fills, application messages 5, 6 and 9 are sent
/// again with PossDupFlag and OrigSendingTime, for every end the peer
/// names (4, 6, 8, 9 and 0 for "all").
#[test]
fn a_resend_mixes_gap_fills_for_admin_runs_with_resent_orders() {
    let order = |sym: &str| format!("11=ID|21=3|40=1|54=1|55={sym}|60=20261123-12:00:00|");
    let (intc, cdg, ivp) = (order("INTC"), order("CDG"), order("IVP"));
    let mut steps = logon(30);
    for n in 2..=4 {
        steps += &format!(
            "> 8={{BS}}|35=1|34={n}|49=TW|52=NOW|56=ISLD|112=HELLO|
             < 8={{BS}}|35=0|34={n}|49=ISLD|52=TIME|56=TW|112=HELLO|
             "
        );
    }
    for (n, o) in [(5, &intc), (6, &cdg)] {
        steps += &format!(
            "> 8={{BS}}|35=D|34={n}|49=TW|52=NOW|56=ISLD|{o}
             < 8={{BS}}|35=D|34={n}|49=ISLD|52=TIME|56=TW|{o}
             "
        );
    }
    for n in 7..=8 {
        steps += &format!(
            "> 8={{BS}}|35=1|34={n}|49=TW|52=NOW|56=ISLD|112=HELLO|
             < 8={{BS}}|35=0|34={n}|49=ISLD|52=TIME|56=TW|112=HELLO|
             "
        );
    }
    steps += &format!(
        "> 8={{BS}}|35=D|34=9|49=TW|52=NOW|56=ISLD|{ivp}
         < 8={{BS}}|35=D|34=9|49=ISLD|52=TIME|56=TW|{ivp}
         "
    );
    let fill = |at: u64, to: u64| {
        format!("< 8={{BS}}|35=4|34={at}|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36={to}|123=Y|\n")
    };
    let resent = |n: u64, o: &str| {
        format!("< 8={{BS}}|35=D|34={n}|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|{o}\n")
    };
    for (seq, end) in [(10, 4), (11, 6), (12, 8), (13, 9), (14, 0)] {
        steps += &format!("> 8={{BS}}|35=2|34={seq}|49=TW|52=NOW|56=ISLD|7=2|16={end}|\n");
        steps += &fill(2, 5);
        if end == 4 {
            continue;
        }
        steps += &resent(5, &intc);
        steps += &resent(6, &cdg);
        if end == 6 {
            continue;
        }
        steps += &fill(7, 9);
        if end == 8 {
            continue;
        }
        steps += &resent(9, &ivp);
    }
    steps += "> 8={BS}|35=1|34=15|49=TW|52=NOW|56=ISLD|112=HELLO|
              < 8={BS}|35=0|34=10|49=ISLD|52=TIME|56=TW|112=HELLO|
              ";
    steps += &peer_logout(16, 11);
    echo_acceptor("8 admin and application", V3, &steps);
}

/// 8_OnlyApplicationMessages.def: only orders in the range, all sent
/// again; with EndSeqNo=0 the Heartbeat after them becomes a final gap
/// fill.
#[test]
fn a_resend_of_orders_only_sends_them_all_again() {
    let order = |sym: &str| format!("11=ID|21=3|40=1|54=1|55={sym}|60=20261123-12:00:00|");
    let orders = [order("INTC"), order("CDG"), order("IVP")];
    let mut steps = logon(30);
    for (i, o) in orders.iter().enumerate() {
        let n = i + 2;
        steps += &format!(
            "> 8={{BS}}|35=D|34={n}|49=TW|52=NOW|56=ISLD|{o}
             < 8={{BS}}|35=D|34={n}|49=ISLD|52=TIME|56=TW|{o}
             "
        );
    }
    let resend_all = |steps: &mut String| {
        for (i, o) in orders.iter().enumerate() {
            let n = i + 2;
            *steps += &format!("< 8={{BS}}|35=D|34={n}|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|{o}\n");
        }
    };
    steps += "> 8={BS}|35=2|34=5|49=TW|52=NOW|56=ISLD|7=2|16=4|\n";
    resend_all(&mut steps);
    steps += "> 8={BS}|35=1|34=6|49=TW|52=NOW|56=ISLD|112=HELLO|
              < 8={BS}|35=0|34=5|49=ISLD|52=TIME|56=TW|112=HELLO|
              > 8={BS}|35=2|34=7|49=TW|52=NOW|56=ISLD|7=2|16=0|
              ";
    resend_all(&mut steps);
    steps += "< 8={BS}|35=4|34=5|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36=6|123=Y|\n";
    steps += &peer_logout(8, 6);
    echo_acceptor("8 only application", V3, &steps);
}
/// 2r_UnregisteredMsgType.def: an application message type the echo does
/// not support gets a BusinessMessageReject (with DefaultApplVerID on
/// FIXT.1.1), which uses up its number.
#[test]
fn an_unsupported_message_type_gets_a_business_reject() {
    for bs in V3 {
        let appl = if *bs == BeginString::Fixt11 {
            "1137=9|"
        } else {
            ""
        };
        let old = if *bs == BeginString::Fix42 {
            "20=0|"
        } else {
            ""
        };
        let steps = format!(
            "{}
             > 8={{BS}}|35=8|34=2|49=TW|52=NOW|56=ISLD|37=id|17=id|{old}150=0|39=0|55=WLRI|54=1|151=100|14=0|6=0.0|
             < 8={{BS}}|35=j|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Unsupported Message Type|372=8|380=3|{appl}
             {}",
            logon(30),
            peer_logout(3, 3)
        );
        echo_acceptor("2r unregistered type", &[*bs], &steps);
    }
}

/// The peer's message `msg` (its fields after BeginString, from MsgType
/// on) numbered `n`, and the Reject(3) numbered `n` it must get: `reject`
/// is Text, RefTagID, RefMsgType and (where the version has it)
/// SessionRejectReason.
fn rejected(n: u64, msg: &str, reject: &str) -> String {
    format!(
        "> 8={{BS}}|35={msg}
         < 8={{BS}}|35=3|34={n}|49=ISLD|52=TIME|56=TW|45={n}|{reject}
         ",
    )
}

/// SessionRejectReason `r` as FIX.4.2 writes it: only codes up to 11.
fn reason(bs: BeginString, r: u32) -> String {
    if bs == BeginString::Fix42 && r > 11 {
        String::new()
    } else {
        format!("373={r}|")
    }
}

/// 14b_RequiredFieldMissing.def: a Heartbeat without TargetCompID, an
/// order without the first field its dictionary requires.
#[test]
fn missing_required_fields_are_rejected_naming_the_tag() {
    for bs in V3 {
        let (order, tag) = match bs {
            BeginString::Fix42 => ("40=1|60=20261123-12:00:00|54=1|21=3|11=id|", 55),
            BeginString::Fix44 => ("40=1|60=20261123-12:00:00|54=1|21=3|", 11),
            _ => ("40=1|60=20261123-12:00:00|11=id|21=3|", 54),
        };
        let steps = format!(
            "{}{}{}{}",
            logon(2),
            rejected(
                2,
                "0|34=2|49=TW|52=NOW|",
                "58=Required tag missing|371=56|372=0|373=1|"
            ),
            rejected(
                3,
                &format!("D|49=TW|34=3|56=ISLD|52=NOW|{order}"),
                &format!("58=Required tag missing|371={tag}|372=D|373=1|")
            ),
            peer_logout(4, 4)
        );
        validating_echo("14b required field missing", &[*bs], &steps);
    }
}

/// 14c_TagNotDefinedForMsgType.def: a defined tag on a message type that
/// does not have it.
#[test]
fn a_tag_not_defined_for_the_message_type_is_rejected() {
    for bs in V3 {
        let tag = if *bs == BeginString::Fixt11 {
            "58=Text"
        } else {
            "55=MSFT"
        };
        let t = &tag[..2];
        let steps = format!(
            "{}{}{}",
            logon(2),
            rejected(
                2,
                &format!("0|34=2|49=TW|52=NOW|56=ISLD|{tag}|"),
                &format!("58=Tag not defined for this message type|371={t}|372=0|373=2|")
            ),
            peer_logout(3, 3)
        );
        validating_echo("14c tag not defined", &[*bs], &steps);
    }
}

/// 14d_TagSpecifiedWithoutValue.def: `56=` with no value.
#[test]
fn a_tag_without_a_value_is_rejected() {
    let steps = format!(
        "{}{}{}",
        logon(2),
        rejected(
            2,
            "0|34=2|49=TW|52=NOW|56=|",
            "58=Tag specified without a value|371=56|372=0|373=4|"
        ),
        peer_logout(3, 3)
    );
    validating_echo("14d tag without value", V3, &steps);
}

/// 14e_IncorrectEnumValue.def: values outside a field's enumeration are
/// rejected; a listed one goes through to the echo.
#[test]
fn values_outside_the_enumeration_are_rejected() {
    for bs in V3 {
        let good = if *bs == BeginString::Fix42 {
            "FUT"
        } else {
            "CS"
        };
        let order = "11=ID|21=1|40=1|54=1|38=002000.00|55=INTC|60=20261123-12:00:00|";
        let echoed = "11=ID|21=1|38=002000.00|40=1|54=1|55=INTC|60=20261123-12:00:00|";
        let steps = format!(
            "{}{}{}
             > 8={{BS}}|35=D|34=4|49=TW|52=NOW|56=ISLD|{order}167={good}|
             < 8={{BS}}|35=D|34=4|49=ISLD|52=TIME|56=TW|{echoed}167={good}|
             {}",
            logon(2),
            rejected(
                2,
                "D|34=2|49=TW|52=NOW|56=ISLD|11=ID|21=4|40=1|54=1|38=002000.00|55=INTC|60=20261123-12:00:00|",
                "58=Value is incorrect (out of range) for this tag|371=21|372=D|373=5|"
            ),
            rejected(
                3,
                &format!("D|34=3|49=TW|52=NOW|56=ISLD|{order}167=BOO|"),
                "58=Value is incorrect (out of range) for this tag|371=167|372=D|373=5|"
            ),
            peer_logout(5, 5)
        );
        validating_echo("14e enum value", &[*bs], &steps);
    }
}

/// 14f_IncorrectDataFormat.def: `38=+200.00` is not a Qty.
#[test]
fn a_value_in_the_wrong_format_is_rejected() {
    let steps = format!(
        "{}{}{}",
        logon(2),
        rejected(
            2,
            "D|34=2|49=TW|52=NOW|56=ISLD|11=ID|21=1|40=1|54=1|38=+200.00|55=INTC|60=20261123-12:00:00|",
            "58=Incorrect data format for value|371=38|372=D|373=6|"
        ),
        peer_logout(3, 3)
    );
    validating_echo("14f data format", V3, &steps);
}

/// 14g_HeaderBodyTrailerFieldsOutOfOrder.def: header fields after body
/// fields; FIX.4.2 has no SessionRejectReason 14 to send.
#[test]
fn header_fields_after_body_fields_are_rejected() {
    for bs in V3 {
        let why = format!(
            "58=Tag specified out of required order|371=34|372=D|{}",
            reason(*bs, 14)
        );
        let steps = format!(
            "{}{}{}{}",
            logon(2),
            rejected(
                2,
                "D|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|34=2|49=TW|52=NOW|56=ISLD|",
                &why
            ),
            rejected(
                3,
                "D|55=MSFT|34=3|49=TW|52=NOW|56=ISLD|11=id|21=3|40=1|54=1|60=20261123-12:00:00|",
                &why
            ),
            peer_logout(4, 4)
        );
        validating_echo("14g out of order", &[*bs], &steps);
    }
}

/// 14h_RepeatedTag.def: OrdType twice.
#[test]
fn a_repeated_tag_is_rejected() {
    for bs in V3 {
        let steps = format!(
            "{}{}{}",
            logon(2),
            rejected(
                2,
                "D|34=2|49=TW|52=NOW|56=ISLD|11=ID|21=1|40=1|54=1|40=2|38=200.00|55=INTC|60=20261123-12:00:00|",
                &format!(
                    "58=Tag appears more than once|371=40|372=D|{}",
                    reason(*bs, 13)
                )
            ),
            peer_logout(3, 3)
        );
        validating_echo("14h repeated tag", &[*bs], &steps);
    }
}

/// 15_HeaderAndBodyFieldsOrderedDifferently.def: header fields after 35
/// and body fields in any order are accepted (and the echo comes back in
/// tag order).
#[test]
fn header_and_body_fields_in_another_order_are_accepted() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|
         < 8={{BS}}|35=D|34=2|49=ISLD|52=TIME|56=TW|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|
         > 8={{BS}}|35=D|49=TW|34=3|56=ISLD|52=NOW|40=1|55=MSFT|60=20261123-12:00:00|54=1|21=3|11=id|
         < 8={{BS}}|35=D|34=3|49=ISLD|52=TIME|56=TW|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|
         {}",
        logon(2),
        peer_logout(4, 4)
    );
    validating_echo("15 fields ordered differently", V3, &steps);
}

/// 19a_PossResendMessageThatHAsAlreadyBeenSent.def: an order sent again
/// with PossResend=Y whose ClOrdID the echo has seen is dropped (its
/// number used).
#[test]
fn a_poss_resend_order_already_seen_is_dropped_by_the_echo() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|
         < 8={{BS}}|35=D|34=2|49=ISLD|52=TIME|56=TW|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|
         > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|97=Y|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|
         {}",
        logon(2),
        peer_logout(4, 3)
    );
    echo_acceptor("19a PossResend seen", V3, &steps);
}

/// 19b_PossResendMessageThatHasNotBeenSent.def: a PossResend=Y order the
/// echo has not seen is processed, PossResend echoed in the header.
#[test]
fn a_poss_resend_order_not_seen_is_processed() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|97=Y|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|
         < 8={{BS}}|35=D|34=2|49=ISLD|52=TIME|56=TW|97=Y|11=id|21=3|40=1|54=1|55=MSFT|60=20261123-12:00:00|
         {}",
        logon(2),
        peer_logout(3, 3)
    );
    echo_acceptor("19b PossResend not seen", V3, &steps);
}

/// 20_SimultaneousResendRequest.def: while our ResendRequest is
/// outstanding the peer asks for ours; both are served, and the Logout
/// after the filled gap is answered in sequence.
#[test]
fn resend_requests_crossing_each_other_are_both_served() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{ORDER}
         < 8={{BS}}|35=D|34=2|49=ISLD|52=TIME|56=TW|{ORDER}
         > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|{ORDER}
         < 8={{BS}}|35=D|34=3|49=ISLD|52=TIME|56=TW|{ORDER}
         > 8={{BS}}|35=0|34=7|49=TW|52=NOW|56=ISLD|
         < 8={{BS}}|35=2|34=4|49=ISLD|52=TIME|56=TW|7=4|16=0|
         > 8={{BS}}|35=2|34=8|49=TW|52=NOW|56=ISLD|7=2|16=3|
         < 8={{BS}}|35=D|34=2|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|{ORDER}
         < 8={{BS}}|35=D|34=3|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|{ORDER}
         > 8={{BS}}|35=0|34=4|43=Y|49=TW|52=NOW|122=NOW|56=ISLD|
         > 8={{BS}}|35=0|34=5|43=Y|49=TW|52=NOW|122=NOW|56=ISLD|
         > 8={{BS}}|35=0|34=6|43=Y|49=TW|52=NOW|122=NOW|56=ISLD|
         {}",
        logon(30),
        peer_logout(7, 5)
    );
    echo_acceptor("20 simultaneous resend", V3, &steps);
}

/// 10_MsgSeqNumEqual.def: a gap fill numbered as expected moves the
/// expected number on.
#[test]
fn a_gap_fill_numbered_as_expected_moves_the_number_on() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=4|34=2|49=TW|52=NOW|56=ISLD|36=20|123=Y|
         > 8={{BS}}|35=1|34=20|49=TW|52=NOW|56=ISLD|112=HELLO|
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=HELLO|
         {}",
        logon(30),
        peer_logout(3, 3)
    );
    echo_acceptor("10 gap fill equal", V3, &steps);
}

/// 10_MsgSeqNumGreater.def: a gap fill numbered above the expected number
/// is a gap: it is queued and the gap asked for.
#[test]
fn a_gap_fill_numbered_above_the_expected_number_asks_for_the_gap() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=4|34=10|49=TW|52=NOW|56=ISLD|36=20|123=Y|
         < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=2|16=0|
         > 8={{BS}}|35=1|34=20|49=TW|52=NOW|56=ISLD|112=HELLO|
         {}",
        logon(30),
        peer_logout(2, 3)
    );
    echo_acceptor("10 gap fill greater", V3, &steps);
}

/// 11a_NewSeqNoGreater.def: a SequenceReset in reset mode (123 absent or
/// N) moves the expected number up, whatever its own MsgSeqNum.
#[test]
fn a_sequence_reset_moves_the_expected_number_up() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=4|34=0|49=TW|52=NOW|56=ISLD|36=25|
         > 8={{BS}}|35=1|34=25|49=TW|52=NOW|56=ISLD|112=HELLO|
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=HELLO|
         > 8={{BS}}|35=4|34=0|49=TW|52=NOW|56=ISLD|36=50|123=N|
         > 8={{BS}}|35=1|34=50|49=TW|52=NOW|56=ISLD|112=HELLO|
         < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|112=HELLO|
         {}",
        logon(30),
        peer_logout(51, 4)
    );
    echo_acceptor("11a NewSeqNo greater", V3, &steps);
}

/// 11b_NewSeqNoEqual.def: a SequenceReset to the expected number changes
/// nothing.
#[test]
fn a_sequence_reset_to_the_expected_number_changes_nothing() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=4|34=0|49=TW|52=NOW|56=ISLD|36=2|
         > 8={{BS}}|35=1|34=2|49=TW|52=NOW|56=ISLD|112=HELLO|
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=HELLO|
         > 8={{BS}}|35=4|34=0|49=TW|52=NOW|56=ISLD|36=4|123=N|
         > 8={{BS}}|35=1|34=4|49=TW|52=NOW|56=ISLD|112=HELLO|
         < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|112=HELLO|
         {}",
        logon(30),
        peer_logout(5, 4)
    );
    echo_acceptor("11b NewSeqNo equal", V3, &steps);
}

/// 2e_PossDupAlreadyReceived.def and 2e_PossDupNotReceived.def: a PossDup
/// copy of a number already taken is ignored; a PossDup message with the
/// expected number is processed like any other.
#[test]
fn poss_dup_is_ignored_when_already_received_and_processed_when_not() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
         > 8={{BS}}|35=0|34=2|49=TW|52=NOW|122=NOW|56=ISLD|43=Y|
         > 8={{BS}}|35=0|34=3|49=TW|52=NOW|122=NOW|56=ISLD|43=Y|
         seqs 2 4
         {}",
        logon(30),
        peer_logout(4, 2)
    );
    echo_acceptor("2e PossDup", V3, &steps);
}

/// RejectResentMessage.def: a resent order that fails validation is
/// rejected and its number used, and the TestRequest queued behind the
/// gap is then answered before the next one.
#[test]
fn a_resent_message_that_fails_validation_is_rejected_and_the_queue_goes_on() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=1|34=3|49=TW|52=NOW|56=ISLD|112=HELLO1|
         < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=2|16=0|
         > 8={{BS}}|35=D|34=2|43=Y|49=TW|52=NOW|56=ISLD|122=NOW|11=ID|21=3|38=100|40=1|54=1|55=IVP|60=20261123-12:00:00|126=20040415|
         < 8={{BS}}|35=3|34=3|49=ISLD|52=TIME|56=TW|45=2|58=Incorrect data format for value|371=126|372=D|373=6|
         < 8={{BS}}|35=0|34=4|49=ISLD|52=TIME|56=TW|112=HELLO1|
         > 8={{BS}}|35=1|34=4|49=TW|52=NOW|56=ISLD|112=HELLO2|
         < 8={{BS}}|35=0|34=5|49=ISLD|52=TIME|56=TW|112=HELLO2|
         {}",
        logon(30),
        peer_logout(11, 6)
    );
    validating_echo("reject resent message", &[BeginString::Fix44], &steps);
}

/// 1d_InvalidLogonBadSendingTime.def: a Logon whose SendingTime is years
/// off is not answered: the connection is dropped.
#[test]
fn a_logon_with_a_bad_sending_time_is_dropped_unanswered() {
    echo_acceptor(
        "1d logon bad SendingTime",
        V3,
        "connect
         > 8={BS}|35=A|34=1|49=TW|52=20010101-00:00:00|56=ISLD|98=0|108=30|{APPL}
         disconnected
         seqs 1 1",
    );
}
/// SessionReset.def: a Logon with ResetSeqNumFlag=Y on a live session
/// resets both numbers to 1 and is answered with one.
#[test]
fn a_logon_with_reset_seq_num_flag_on_a_live_session_resets_it() {
    let mut steps = logon(30);
    for n in 2..=9 {
        steps += &format!("> 8={{BS}}|35=0|34={n}|49=TW|52=NOW|56=ISLD|\n");
    }
    steps += &format!(
        "> 8={{BS}}|35=1|34=10|49=TW|52=NOW|56=ISLD|112=1|
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=1|
         > 8={{BS}}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|{{APPL}}
         < 8={{BS}}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108=30|141=Y|{{APPL}}
         logged-on
         > 8={{BS}}|35=1|34=2|49=TW|52=NOW|56=ISLD|112=1|
         < 8={{BS}}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=1|
         {}",
        peer_logout(3, 3)
    );
    echo_acceptor("session reset", V3, &steps);
}
/// 14i_RepeatingGroupCountNotEqual.def: NoTradingSessions(386)=3 with two
/// entries.
#[test]
fn a_group_count_that_does_not_match_its_entries_is_rejected() {
    for bs in V3 {
        let steps = format!(
            "{}{}{}",
            logon(2),
            rejected(
                2,
                "D|34=2|49=TW|52=NOW|56=ISLD|11=ID|21=1|40=1|54=1|38=200.00|55=INTC|386=3|336=PRE-OPEN|336=AFTER-HOURS|60=20261123-12:00:00|",
                &format!(
                    "58=Incorrect NumInGroup count for repeating group|371=386|372=D|{}",
                    reason(*bs, 16)
                )
            ),
            peer_logout(3, 3)
        );
        validating_echo("14i group count", &[*bs], &steps);
    }
}
/// 14a_BadField.def: tags no dictionary defines (999, 0, -1 and the user
/// range's 5000) are rejected as invalid tag numbers.
#[test]
fn undefined_tags_are_rejected_as_invalid_tag_numbers() {
    let mut steps = logon(2);
    for (n, tag) in [(2, "999"), (3, "0"), (4, "-1"), (5, "5000")] {
        steps += &rejected(
            n,
            &format!("0|34={n}|49=TW|52=NOW|56=ISLD|{tag}=HI|"),
            &format!("58=Invalid tag number|371={tag}|372=0|373=0|"),
        );
    }
    steps += &peer_logout(6, 6);
    validating_echo("14a bad field", V3, &steps);
}

/// ReverseRoute.def: a Reject sends the routing fields back reversed:
/// OnBehalfOf(Comp|Sub|Location)ID as DeliverTo..., and the other way.
#[test]
fn a_reject_reverses_the_routing_fields() {
    let why = "58=Value is incorrect (out of range) for this tag|371=40|372=D|373=5|";
    let order = "11=ID|21=3|38=100|40=w|54=1|55=INTC|60=20261123-12:00:00|";
    let mut steps = logon(30);
    for (n, route, back) in [
        (2, "115=JCD|", "128=JCD|"),
        (3, "128=JCD|", "115=JCD|"),
        (4, "115=JCD|116=CS|", "128=JCD|129=CS|"),
        (5, "128=JCD|129=CS|", "115=JCD|116=CS|"),
        (6, "115=JCD|116=CS|144=CHI|", "128=JCD|129=CS|145=CHI|"),
        (7, "128=JCD|129=CS|145=CHI|", "115=JCD|116=CS|144=CHI|"),
    ] {
        steps += &format!(
            "> 8={{BS}}|35=D|34={n}|49=TW|52=NOW|56=ISLD|{route}{order}
             < 8={{BS}}|35=3|34={n}|49=ISLD|52=TIME|56=TW|{back}45={n}|{why}
             "
        );
    }
    steps += &peer_logout(8, 8);
    validating_echo("reverse route", V3, &steps);
}

/// ReverseRouteWithEmptyRoutingTags.def: an empty routing field is
/// rejected for having no value and is not sent back.
#[test]
fn an_empty_routing_field_is_not_reversed() {
    let why = |tag: u32| format!("58=Tag specified without a value|371={tag}|372=D|373=4|");
    let order =
        |ord: &str| format!("11=ID|21=3|38=100|40={ord}|54=1|55=INTC|60=20261123-12:00:00|");
    let mut steps = logon(30);
    for (n, route, back, tag, ord) in [
        (2, "115=|", "", 115, "1"),
        (3, "128=|", "", 128, "1"),
        (4, "115=JCD|116=|", "128=JCD|", 116, "1"),
        (5, "128=JCD|129=|", "115=JCD|", 129, "1"),
        (6, "115=JCD|116=CS|144=|", "128=JCD|129=CS|", 144, "1"),
        (7, "128=JCD|129=CS|145=|", "115=JCD|116=CS|", 145, "w"),
    ] {
        steps += &format!(
            "> 8={{BS}}|35=D|34={n}|49=TW|52=NOW|56=ISLD|{route}{}
             < 8={{BS}}|35=3|34={n}|49=ISLD|52=TIME|56=TW|{back}45={n}|{}
             ",
            order(ord),
            why(tag)
        );
    }
    steps += &peer_logout(8, 8);
    validating_echo("reverse route, empty tags", V3, &steps);
}

/// `initiator` with the Reset* settings `set` applies.
fn initiator_with(name: &str, versions: &[BeginString], set: fn(&mut Config), steps: &str) {
    for &bs in versions {
        let mut cfg = config(bs, Role::Initiator);
        set(&mut cfg);
        Script::new(&format!("{name} ({})", bs.as_str()), cfg).run(&expand(steps, bs));
    }
}

/// An initiator with ResetOnLogout=Y asks for a reset on its Logon while
/// both numbers stand at 1 (QuickFIX's shouldSendReset, from FIX 4.1),
/// and is back at 1 after the Logout handshake.
#[test]
fn an_initiator_with_reset_on_logout_asks_for_a_reset_and_starts_over() {
    initiator_with(
        "ResetOnLogout",
        &ALL[1..],
        |c| c.reset_on_logout = true,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|141=Y|{APPL}
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|141=Y|{APPL}
         logged-on
         > 8={BS}|35=0|34=2|49=ISLD|52=NOW|56=TW|
         seqs 2 3
         > 8={BS}|35=5|34=3|49=ISLD|52=NOW|56=TW|
         < 8={BS}|35=5|34=2|49=TW|52=TIME|56=ISLD|
         logged-out
         disconnected
         seqs 1 1
         connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|141=Y|{APPL}",
    );
}

/// FIX.4.0 has no ResetSeqNumFlag: an initiator with ResetOnLogon=Y
/// resets its numbers but its Logon does not ask the peer to.
#[test]
fn a_fix_4_0_initiator_resets_without_asking() {
    initiator_with(
        "ResetOnLogon 4.0",
        &ALL[..1],
        |c| c.reset_on_logon = true,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|
         logged-on
         seqs 2 2",
    );
}

/// ResetOnDisconnect=Y: the numbers go back to 1 when the connection
/// drops, and the next Logon asks the peer for a reset too.
#[test]
fn reset_on_disconnect_starts_the_next_connection_at_one() {
    initiator_with(
        "ResetOnDisconnect",
        V3,
        |c| c.reset_on_disconnect = true,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|141=Y|{APPL}
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|141=Y|{APPL}
         logged-on
         > 8={BS}|35=1|34=2|49=ISLD|52=NOW|56=TW|112=X|
         < 8={BS}|35=0|34=2|49=TW|52=TIME|56=ISLD|112=X|
         seqs 3 3
         disconnect
         seqs 1 1
         connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|141=Y|{APPL}",
    );
}

/// Without a Reset* setting numbers survive a reconnect: the next Logon
/// carries the next number and no reset.
#[test]
fn without_reset_settings_numbers_survive_a_reconnect() {
    initiator(
        "no reset",
        V3,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|{APPL}
         logged-on
         disconnect
         seqs 2 2
         connect
         < 8={BS}|35=A|34=2|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
         > 8={BS}|35=A|34=2|49=ISLD|52=NOW|56=TW|98=0|108=30|{APPL}
         logged-on
         seqs 3 3",
    );
}
/// 2m_BodyLengthValueNotCorrect.def: a BodyLength too short drops the
/// message; one too long swallows the message after it too (the frame
/// runs to the next CheckSum), so both come again.
#[test]
fn a_wrong_body_length_drops_the_message_and_what_it_swallows() {
    let steps = format!(
        "{}
         > 8={{BS}}|9=30|35=D|34=2|49=TW|52=NOW|56=ISLD|{ORDER}
         > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|{ORDER}
         < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=2|16=0|
         > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|122=NOW|{ORDER}
         < 8={{BS}}|35=D|34=3|49=ISLD|52=TIME|56=TW|{ORDER}
         < 8={{BS}}|35=D|34=4|49=ISLD|52=TIME|56=TW|{ORDER}
         > 8={{BS}}|9=111|35=D|34=4|49=TW|52=NOW|56=ISLD|{ORDER}
         > 8={{BS}}|35=D|34=5|49=TW|52=NOW|56=ISLD|{ORDER}
         > 8={{BS}}|35=D|34=4|49=TW|52=NOW|56=ISLD|{ORDER}
         > 8={{BS}}|35=D|34=5|49=TW|52=NOW|56=ISLD|{ORDER}
         < 8={{BS}}|35=D|34=5|49=ISLD|52=TIME|56=TW|{ORDER}
         < 8={{BS}}|35=D|34=6|49=ISLD|52=TIME|56=TW|{ORDER}
         {}",
        logon(30),
        peer_logout(6, 7)
    );
    echo_acceptor("2m body length", V3, &steps);
}

/// 1d_InvalidLogonLengthInvalid.def: a Logon whose BodyLength is wrong
/// reaches the session as a frame it cannot parse, and a Logon that is
/// not valid ends the connection unanswered.
#[test]
fn a_logon_with_a_wrong_body_length_is_dropped_unanswered() {
    echo_acceptor(
        "1d logon bad BodyLength",
        V3,
        "connect
         > 8={BS}|9=40|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|{APPL}
         disconnected
         seqs 1 1",
    );
}

/// A Logon's NextExpectedMsgSeqNum(789) below our next number: once logged
/// on, what the peer missed is sent again (orders with PossDupFlag, our
/// admin messages as one gap fill), as QuickFIX does after 1.15.1.
#[test]
fn next_expected_msg_seq_num_below_ours_brings_a_retransmission() {
    for &bs in V3 {
        let steps = expand(
            &format!(
                "{LOGON}
                 > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{ORDER}
                 < 8={{BS}}|35=D|34=2|49=ISLD|52=TIME|56=TW|{ORDER}
                 > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|{ORDER}
                 < 8={{BS}}|35=D|34=3|49=ISLD|52=TIME|56=TW|{ORDER}
                 disconnect
                 connect
                 > 8={{BS}}|35=A|34=4|49=TW|52=NOW|56=ISLD|98=0|108=30|789=2|{{APPL}}
                 < 8={{BS}}|35=A|34=4|49=ISLD|52=TIME|56=TW|98=0|108=30|{{APPL}}
                 logged-on
                 < 8={{BS}}|35=D|34=2|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|{ORDER}
                 < 8={{BS}}|35=D|34=3|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|{ORDER}
                 < 8={{BS}}|35=4|34=4|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36=5|123=Y|
                 seqs 5 5"
            ),
            bs,
        );
        Script::new(
            &format!("789 too low ({})", bs.as_str()),
            config(bs, Role::Acceptor),
        )
        .echo()
        .run(&steps);
    }
}

/// A Logon's NextExpectedMsgSeqNum(789) above anything we sent: the peer
/// expects messages that do not exist, so the session ends with a Logout
/// saying so.
#[test]
fn next_expected_msg_seq_num_above_ours_ends_the_session() {
    acceptor(
        "789 too high",
        V3,
        "connect
         > 8={BS}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|789=5|{APPL}
         < 8={BS}|35=5|34=1|49=ISLD|52=TIME|56=TW|58=NextExpectedMsgSeqNum too high, expecting 1 but received 5|
         disconnected",
    );
}

/// With EnableNextExpectedMsgSeqNum=Y our Logon reply tells the peer where
/// to start, so a Logon ahead of the expected number asks for nothing:
/// the gap fills from the peer's own retransmission.
#[test]
fn with_next_expected_msg_seq_num_a_gap_at_logon_is_not_asked_for() {
    for &bs in V3 {
        let mut cfg = config(bs, Role::Acceptor);
        cfg.next_expected_msg_seq_num = true;
        let steps = expand(
            "connect
             > 8={BS}|35=A|34=3|49=TW|52=NOW|56=ISLD|98=0|108=30|789=1|{APPL}
             < 8={BS}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108=30|789=2|{APPL}
             logged-on
             seqs 2 1
             > 8={BS}|35=4|34=1|49=TW|52=NOW|56=ISLD|43=Y|122=NOW|36=3|123=Y|
             seqs 2 4
             > 8={BS}|35=1|34=4|49=TW|52=NOW|56=ISLD|112=T|
             < 8={BS}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=T|",
            bs,
        );
        Script::new(&format!("789 configured ({})", bs.as_str()), cfg).run(&steps);
    }
}

/// SendRedundantResendRequests=Y: a second message past the gap asks
/// again, where by default one outstanding request is enough.
#[test]
fn redundant_resend_requests_are_sent_only_when_configured() {
    for (redundant, again) in [
        (false, ""),
        (true, "< 8={BS}|35=2|34=3|49=ISLD|52=TIME|56=TW|7=2|16=0|"),
    ] {
        for &bs in V3 {
            let mut cfg = config(bs, Role::Acceptor);
            cfg.send_redundant_resend_requests = redundant;
            let steps = expand(
                &format!(
                    "{LOGON}
                     > 8={{BS}}|35=0|34=5|49=TW|52=NOW|56=ISLD|
                     < 8={{BS}}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=2|16=0|
                     > 8={{BS}}|35=0|34=6|49=TW|52=NOW|56=ISLD|
                     {again}"
                ),
                bs,
            );
            Script::new(&format!("redundant={redundant} ({})", bs.as_str()), cfg).run(&steps);
        }
    }
}

/// PersistMessages=N: nothing sent is kept, so a ResendRequest is
/// answered with one gap fill over the whole range (and counted).
#[test]
fn without_persisted_messages_a_resend_is_one_gap_fill() {
    for &bs in V3 {
        let mut cfg = config(bs, Role::Acceptor);
        cfg.persist_messages = false;
        let steps = expand(
            &format!(
                "{LOGON}
                 > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{ORDER}
                 < 8={{BS}}|35=D|34=2|49=ISLD|52=TIME|56=TW|{ORDER}
                 > 8={{BS}}|35=2|34=3|49=TW|52=NOW|56=ISLD|7=1|16=0|
                 < 8={{BS}}|35=4|34=1|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|36=3|123=Y|
                 seqs 3 4"
            ),
            bs,
        );
        Script::new(&format!("PersistMessages=N ({})", bs.as_str()), cfg)
            .echo()
            .run(&steps);
    }
}

/// `acceptor` whose session runs from `start` to `end` (seconds of the
/// UTC day); the scripts' clock starts at 12:00:00.
fn acceptor_in_hours(name: &str, start: u32, end: u32, steps: &str) {
    for &bs in V3 {
        let mut cfg = config(bs, Role::Acceptor);
        cfg.session_time = Some(TimeWindow::daily(TimeOfDay(start), TimeOfDay(end)));
        Script::new(&format!("{name} ({})", bs.as_str()), cfg).run(&expand(steps, bs));
    }
}

/// StartTime/EndTime: when the window closes (EndTime inclusive) the
/// session is logged out, disconnected and its numbers reset (QuickFIX's
/// checkSessionTime and Session::reset). HeartBtInt=0 keeps the hour
/// quiet.
#[test]
fn the_end_of_session_time_logs_out_and_resets_the_numbers() {
    acceptor_in_hours(
        "EndTime",
        12 * 3600,
        13 * 3600,
        &format!(
            "{}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             wait 3600
             seqs 2 3
             wait 1
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|
             disconnected
             seqs 1 1",
            logon(0)
        ),
    );
}

/// A Logon outside session time is answered with a Logout and the
/// connection closed; within the next window the numbers start at 1.
#[test]
fn a_logon_outside_session_time_is_logged_out() {
    acceptor_in_hours(
        "outside hours",
        13 * 3600,
        14 * 3600,
        "connect
         > 8={BS}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|{APPL}
         < 8={BS}|35=5|34=1|49=ISLD|52=TIME|56=TW|
         disconnected
         seqs 1 1",
    );
}

/// A window across midnight (22:00-06:00) does not hold midday: an
/// initiator does not even log on. One from 06:00 to 05:00 does.
#[test]
fn an_overnight_window_is_one_window() {
    for (start, end, steps) in [
        (22, 6, "connect\ndisconnected"),
        (
            6,
            5,
            "connect
             < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}",
        ),
    ] {
        for &bs in V3 {
            let mut cfg = config(bs, Role::Initiator);
            cfg.session_time = Some(TimeWindow::daily(
                TimeOfDay(start * 3600),
                TimeOfDay(end * 3600),
            ));
            Script::new(&format!("overnight {start}-{end} ({})", bs.as_str()), cfg)
                .run(&expand(steps, bs));
        }
    }
}

/// LogonTime/LogoutTime inside the session's hours (11:00-20:00; the
/// scripts start at 12:00): a Logon before 12:30 is refused without an
/// answer ("Received logon outside of valid logon time"), one at 12:30 is
/// taken, and the session logs itself out once 13:00 has passed, keeping
/// its numbers (the session's hours have not ended).
#[test]
fn logon_time_gates_logons_and_ends_the_logged_on_session() {
    for &bs in V3 {
        let mut cfg = config(bs, Role::Acceptor);
        cfg.session_time = Some(TimeWindow::daily(
            TimeOfDay(11 * 3600),
            TimeOfDay(20 * 3600),
        ));
        cfg.logon_time = Some(TimeWindow::daily(
            TimeOfDay(12 * 3600 + 1800),
            TimeOfDay(13 * 3600),
        ));
        let steps = format!(
            "connect
             > 8={{BS}}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=0|{{APPL}}
             disconnected
             seqs 1 1
             wait 1800
             {}
             wait 1800
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             wait 1
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|
             > 8={{BS}}|35=5|34=3|49=TW|52=NOW|56=ISLD|
             logged-out
             disconnected
             seqs 3 4",
            logon(0)
        );
        Script::new(&format!("logon time ({})", bs.as_str()), cfg).run(&expand(&steps, bs));
    }
}

/// An initiator connected before its LogonTime sends nothing, and sends
/// its Logon on the first tick inside it (QuickFIX's next()).
#[test]
fn an_initiator_waits_for_its_logon_time() {
    for &bs in V3 {
        let mut cfg = config(bs, Role::Initiator);
        cfg.session_time = Some(TimeWindow::daily(
            TimeOfDay(11 * 3600),
            TimeOfDay(20 * 3600),
        ));
        cfg.logon_time = Some(TimeWindow::daily(
            TimeOfDay(12 * 3600 + 10),
            TimeOfDay(19 * 3600),
        ));
        let steps = "connect
             wait 5
             seqs 1 1
             wait 5
             < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
             seqs 2 1";
        Script::new(&format!("waiting initiator ({})", bs.as_str()), cfg).run(&expand(steps, bs));
    }
}

/// A weekly session (StartDay/EndDay, Monday 11:00 to Friday 17:00; the
/// scripts start on Monday at 12:00) stays one session across the nights
/// of the week and ends on Friday after 17:00: Logout, disconnect, both
/// numbers back to 1; a Logon on Saturday is answered with a Logout.
#[test]
fn a_weekly_session_runs_from_its_start_day_to_its_end_day() {
    let day = |n| Weekday::new(n).unwrap();
    for &bs in V3 {
        let mut cfg = config(bs, Role::Acceptor);
        cfg.session_time = Some(TimeWindow::weekly(
            TimeOfDay(11 * 3600),
            TimeOfDay(17 * 3600),
            day(2),
            day(6),
        ));
        // Monday 12:00 + 4 days 5 hours = Friday 17:00, still inside.
        let steps = format!(
            "{}
             wait 104400
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             seqs 2 3
             wait 259200
             > 8={{BS}}|35=0|34=3|49=TW|52=NOW|56=ISLD|
             seqs 2 4
             wait 1
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|
             disconnected
             seqs 1 1
             wait 86400
             connect
             > 8={{BS}}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=0|{{APPL}}
             < 8={{BS}}|35=5|34=1|49=ISLD|52=TIME|56=TW|
             disconnected
             seqs 1 1",
            logon(0)
        );
        Script::new(&format!("weekly ({})", bs.as_str()), cfg).run(&expand(&steps, bs));
    }
}

/// RefreshOnLogon: a standby engine that opened the journal before the
/// primary wrote to it reloads it when a Logon arrives, so it expects the
/// primary's numbers; without the setting it expects its stale ones and
/// asks for a resend.
#[test]
fn refresh_on_logon_reloads_the_journal_another_process_wrote() {
    use fixcore::session::store::{Durability, FileStore};
    let dir = tempfile::tempdir().unwrap();
    for refresh in [true, false] {
        let path = dir.path().join(format!("FIX.4.4-ISLD-TW-{refresh}"));
        let mut cfg = config(BeginString::Fix44, Role::Acceptor);
        cfg.refresh_on_logon = refresh;
        let mut standby = Session::new(cfg, FileStore::open(&path, Durability::Process).unwrap());
        // The primary ran the session up to our number 5, theirs 7.
        let mut primary = FileStore::open(&path, Durability::Process).unwrap();
        primary.set_seqs(5, 7).unwrap();
        drop(primary);
        let now = UtcTimestamp { unix_nanos: T0 };
        standby.on_connect(now).unwrap();
        let logon = frame("8=FIX.4.4|35=A|34=7|49=TW|52=NOW|56=ISLD|98=0|108=30|", T0);
        standby.on_message(&logon, now).unwrap();
        let sent: Vec<Vec<(String, String)>> = standby
            .drain()
            .filter_map(|o| match o {
                Output::Send(b) => Some(fields_of(&b)),
                _ => None,
            })
            .collect();
        let field = |m: &[(String, String)], t: &str| {
            m.iter().find(|(k, _)| k == t).map(|(_, v)| v.clone())
        };
        let types: Vec<_> = sent.iter().map(|m| field(m, "35").unwrap()).collect();
        if refresh {
            assert_eq!(types, ["A"], "the Logon answered, nothing missing");
            assert_eq!(field(&sent[0], "34").as_deref(), Some("5"));
            assert_eq!(standby.store().next_target_seq(), 8);
        } else {
            assert_eq!(types, ["A", "2"], "stale numbers: a gap from 1");
            assert_eq!(field(&sent[0], "34").as_deref(), Some("1"));
        }
    }
}

/// TimestampPrecision: SendingTime carries the configured digits from
/// FIX 4.2 on; FIX.4.0/4.1 define whole seconds only (QuickFIX's
/// insertSendingTime).
#[test]
fn sending_time_has_the_configured_precision() {
    use fixcore::build::TimePrecision;
    for (bs, precision, digits) in [
        (BeginString::Fix44, TimePrecision::Micros, 6),
        (BeginString::Fix42, TimePrecision::Nanos, 9),
        (BeginString::Fix44, TimePrecision::Seconds, 0),
        (BeginString::Fix41, TimePrecision::Micros, 0),
    ] {
        let mut cfg = config(bs, Role::Acceptor);
        cfg.timestamp_precision = precision;
        let mut session = Session::new(cfg, MemoryStore::default());
        let now = UtcTimestamp {
            unix_nanos: T0 + 123_456_789,
        };
        session.on_connect(now).unwrap();
        let logon = frame(
            &format!(
                "8={}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|",
                bs.as_str()
            ),
            T0,
        );
        session.on_message(&logon, now).unwrap();
        let reply = session
            .drain()
            .find_map(|o| match o {
                Output::Send(b) => Some(fields_of(&b)),
                _ => None,
            })
            .expect("the Logon is answered");
        let sent = &reply.iter().find(|(t, _)| t == "52").unwrap().1;
        let want = "20261123-12:00:00.123456789";
        let want = if digits == 0 {
            &want[..17]
        } else {
            &want[..18 + digits]
        };
        assert_eq!(sent, want, "{} {precision:?}", bs.as_str());
    }
}

/// A message without MsgSeqNum: the dictionary's required header field,
/// rejected with no RefSeqNum to give and no number used.
#[test]
fn a_message_without_msg_seq_num_is_rejected_without_ref_seq_num() {
    validating_echo(
        "no MsgSeqNum",
        V3,
        &format!(
            "{}
             > 8={{BS}}|35=0|49=TW|52=NOW|56=ISLD|
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|58=Required tag missing|371=34|372=0|373=1|
             > 8={{BS}}|35=1|34=2|49=TW|52=NOW|56=ISLD|112=A|
             < 8={{BS}}|35=0|34=3|49=ISLD|52=TIME|56=TW|112=A|
             {}",
            logon(30),
            peer_logout(3, 4)
        ),
    );
}

/// A Logon numbered below what the session expects (numbers kept from the
/// last connection, no reset asked) ends it: Logout "MsgSeqNum too low"
/// and disconnect (QuickFIX's verify(logon, false, true)).
#[test]
fn a_logon_numbered_too_low_ends_the_session() {
    acceptor(
        "logon too low",
        ALL,
        &format!(
            "{LOGON}
             > 8={{BS}}|35=0|34=2|49=TW|52=NOW|56=ISLD|
             disconnect
             connect
             > 8={{BS}}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|{{APPL}}
             < 8={{BS}}|35=5|34=2|49=ISLD|52=TIME|56=TW|58=MsgSeqNum too low, expecting 3 but received 1|
             disconnected"
        ),
    );
}

/// The initiator's side of the timers: Heartbeats at its own HeartBtInt,
/// a TestRequest answered with its id, one sent when the acceptor goes
/// quiet.
#[test]
fn an_initiator_keeps_the_heartbeat_it_proposed() {
    initiator(
        "initiator heartbeats",
        V3,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|{APPL}
         logged-on
         wait 30
         < 8={BS}|35=0|34=2|49=TW|52=TIME|56=ISLD|
         > 8={BS}|35=1|34=2|49=ISLD|52=NOW|56=TW|112=PING|
         < 8={BS}|35=0|34=3|49=TW|52=TIME|56=ISLD|112=PING|
         wait 36
         < 8={BS}|35=1|34=4|49=TW|52=TIME|56=ISLD|112=TEST|",
    );
}

/// An initiator finding a gap asks for it, takes the acceptor's resent
/// order (PossDupFlag) and gap fill, then the queued message, in order.
#[test]
fn an_initiator_recovers_a_gap_from_the_acceptor() {
    initiator(
        "initiator gap",
        V3,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|{APPL}
         logged-on
         > 8={BS}|35=8|34=4|49=ISLD|52=NOW|56=TW|37=O|17=E4|
         < 8={BS}|35=2|34=2|49=TW|52=TIME|56=ISLD|7=2|16=0|
         > 8={BS}|35=8|34=2|43=Y|49=ISLD|52=NOW|56=TW|122=NOW-5|37=O|17=E2|
         deliver 2
         > 8={BS}|35=4|34=3|43=Y|49=ISLD|52=NOW|56=TW|122=NOW|36=4|123=Y|
         deliver 4
         seqs 3 5",
    );
}

/// An initiator serves the acceptor's ResendRequest: its orders again with
/// PossDupFlag and OrigSendingTime, its Logon as a gap fill.
#[test]
fn an_initiator_resends_its_orders_on_request() {
    initiator(
        "initiator resend",
        V3,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|{APPL}
         logged-on
         app D|11=A|55=X|
         < 8={BS}|35=D|34=2|49=TW|52=TIME|56=ISLD|11=A|55=X|
         app D|11=B|55=Y|
         < 8={BS}|35=D|34=3|49=TW|52=TIME|56=ISLD|11=B|55=Y|
         > 8={BS}|35=2|34=2|49=ISLD|52=NOW|56=TW|7=1|16=0|
         < 8={BS}|35=4|34=1|43=Y|49=TW|52=TIME|56=ISLD|122=TIME|36=2|123=Y|
         < 8={BS}|35=D|34=2|43=Y|49=TW|52=TIME|56=ISLD|122=TIME|11=A|55=X|
         < 8={BS}|35=D|34=3|43=Y|49=TW|52=TIME|56=ISLD|122=TIME|11=B|55=Y|
         seqs 4 3",
    );
}

/// Our application cannot send before the Logon exchange is complete.
#[test]
fn application_messages_wait_for_the_logon() {
    let mut s = Script::new(
        "send before logon",
        config(BeginString::Fix44, Role::Initiator),
    );
    s.step("connect");
    s.step("< 8=FIX.4.4|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|");
    let now = s.now();
    assert!(
        !s.session
            .send_app(b"D", now, |b| {
                b.field_str(11, "A");
            })
            .unwrap()
    );
    s.run("seqs 2 1");
}

/// 21_RepeatingGroupSpecifierWithValueOfZero.def: a SecurityDefinition
/// whose group counts are 0 with no entries is valid, and the echo sends
/// it back in tag order.
#[test]
fn group_counts_of_zero_pass_validation_and_echo() {
    for &bs in V3 {
        let (groups, ty, session) = match bs {
            BeginString::Fix42 => ("393=0|146=0|", "OPT", "336=ONE_MAIN|"),
            BeginString::Fix44 => ("454=0|", "CS", "336=ONE_MAIN|"),
            _ => ("454=0|", "CS", ""),
        };
        let echoed = match bs {
            BeginString::Fix42 => format!(
                "22=8|55=TBS|58=No Products found for this Class Symbol|146=0|167={ty}|320=JCD1091-20021011|322=1034356488676|323=6|{session}393=0|"
            ),
            _ => format!(
                "22=8|55=TBS|58=No Products found for this Class Symbol|167={ty}|320=JCD1091-20021011|322=1034356488676|323=6|{session}454=0|"
            ),
        };
        let steps = format!(
            "{}
             > 8={{BS}}|35=d|34=2|49=TW|56=ISLD|52=NOW|320=JCD1091-20021011|322=1034356488676|323=6|55=TBS|22=8|167={ty}|{session}58=No Products found for this Class Symbol|{groups}
             < 8={{BS}}|35=d|34=2|49=ISLD|52=TIME|56=TW|{echoed}
             {}",
            logon(30),
            peer_logout(3, 3)
        );
        validating_echo("21 group count zero", &[bs], &steps);
    }
}

/// The acceptor resets a live session (Logon with ResetSeqNumFlag=Y the
/// initiator did not ask for): the initiator starts over at 1 and answers
/// with a Logon of its own, as QuickFIX's nextLogon does.
#[test]
fn an_initiator_answers_a_reset_it_did_not_ask_for() {
    initiator(
        "initiator reset by peer",
        V3,
        "connect
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|{APPL}
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|{APPL}
         logged-on
         > 8={BS}|35=0|34=2|49=ISLD|52=NOW|56=TW|
         seqs 2 3
         > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|141=Y|{APPL}
         < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|141=Y|{APPL}
         logged-on
         seqs 2 2",
    );
}

/// 2b_MsgSeqNumTooHigh.def as the acceptance suite runs it: heartbeats
/// 5-9 fill the gap the ResendRequest asked for, the queued 10 follows,
/// and the Logout numbered 11 is answered in sequence.
#[test]
fn a_gap_filled_by_plain_messages_releases_the_queue() {
    let mut steps = logon(30);
    for n in [2, 3, 4, 10] {
        steps += &format!("> 8={{BS}}|35=0|34={n}|49=TW|52=NOW|56=ISLD|\n");
    }
    steps += "< 8={BS}|35=2|34=2|49=ISLD|52=TIME|56=TW|7=5|16=0|\n";
    for n in 5..=9 {
        steps += &format!("> 8={{BS}}|35=0|34={n}|49=TW|52=NOW|56=ISLD|\n");
    }
    steps += "seqs 3 11\n";
    steps += &peer_logout(11, 3);
    echo_acceptor("2b too high", V3, &steps);
}

/// 2k_CompIDDoesNotMatchProfile.def: a wrong SenderCompID, a wrong
/// TargetCompID, both wrong: each a Reject "CompID problem" and a Logout,
/// each on a new connection.
#[test]
fn any_comp_id_that_does_not_match_is_rejected_and_logged_out() {
    let mut steps = String::new();
    for ids in [
        "49=WT|52=NOW|56=ISLD",
        "49=TW|52=NOW|56=DLSI",
        "49=WT|52=NOW|56=DLSI",
    ] {
        steps += &format!(
            "{}
             > 8={{BS}}|35=D|34=2|{ids}|{ORDER}
             < 8={{BS}}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=CompID problem|372=D|373=9|
             < 8={{BS}}|35=5|34=3|49=ISLD|52=TIME|56=TW|
             > 8={{BS}}|35=5|34=3|49=TW|52=NOW|56=ISLD|
             logged-out
             disconnected
             ",
            logon(30)
        );
    }
    echo_acceptor("2k CompID", V3, &steps);
}

/// 2f_PossDupOrigSendingTimeTooHigh.def as written: the duplicate is
/// numbered below the expected number, its OrigSendingTime after its
/// SendingTime: Reject, Logout, and the peer's Logout ends it.
#[test]
fn a_duplicate_sent_after_its_original_time_is_rejected() {
    let steps = format!(
        "{}
         > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{ORDER}
         < 8={{BS}}|35=D|34=2|49=ISLD|52=TIME|56=TW|{ORDER}
         > 8={{BS}}|35=D|34=3|49=TW|52=NOW|56=ISLD|{ORDER}
         < 8={{BS}}|35=D|34=3|49=ISLD|52=TIME|56=TW|{ORDER}
         > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|43=Y|122=NOW+10|{ORDER}
         < 8={{BS}}|35=3|34=4|49=ISLD|52=TIME|56=TW|45=2|58=SendingTime accuracy problem|372=D|373=10|
         < 8={{BS}}|35=5|34=5|49=ISLD|52=TIME|56=TW|
         > 8={{BS}}|35=5|34=4|49=TW|52=NOW|56=ISLD|
         logged-out
         disconnected",
        logon(30)
    );
    echo_acceptor("2f OrigSendingTime after SendingTime", V3, &steps);
}

/// 2i_BeginStringValueUnexpected.def: a FIX.4.1 message on the session
/// gets a Logout "Incorrect BeginString"; whether or not the peer answers
/// it, the connection ends.
#[test]
fn a_message_of_another_version_is_answered_with_a_logout() {
    let bad = "> 8=FIX.4.1|35=1|34=2|49=TW|52=NOW|56=ISLD|112=id|
               < 8={BS}|35=5|34=2|49=ISLD|52=TIME|56=TW|58=Incorrect BeginString|";
    let steps = format!(
        "{}{bad}
         > 8={{BS}}|35=5|34=3|49=TW|52=NOW|56=ISLD|
         logged-out
         disconnected
         {}{bad}
         wait 2
         disconnected",
        logon(30),
        logon(30)
    );
    echo_acceptor(
        "2i BeginString",
        &[BeginString::Fix44, BeginString::Fixt11],
        &steps,
    );
}

/// validate/CheckFieldsHaveValues.def (QuickFIX after 1.15.1, the session
/// NO_CHECK_FIELDS_HAVE_VALUES of the acceptance configuration): a
/// TestRequest with an empty TestReqID is rejected when values are
/// checked, and answered with the same empty TestReqID when they are not.
#[test]
fn an_empty_test_req_id_is_rejected_or_echoed_as_configured() {
    for (check, answer) in [
        (
            true,
            "< 8={BS}|35=3|34=2|49=ISLD|52=TIME|56=TW|45=2|58=Tag specified without a value|371=112|372=1|373=4|",
        ),
        (false, "< 8={BS}|35=0|34=2|49=ISLD|52=TIME|56=TW|112=|"),
    ] {
        for &bs in V3 {
            let Some((session, app)) = dictionaries(bs) else {
                return;
            };
            let mut cfg = acceptance_config(bs);
            cfg.validator = Some(std::sync::Arc::new(
                fixcore::dictionary::validate::Validator::new(
                    session,
                    app,
                    fixcore::settings::Validation {
                        fields_have_values: check,
                        ..fixcore::settings::Validation::default()
                    },
                ),
            ));
            let steps = format!(
                "{}
                 > 8={{BS}}|35=1|34=2|49=TW|52=NOW|56=ISLD|112=|
                 {answer}
                 {}",
                logon(30),
                peer_logout(3, 3)
            );
            Script::new(
                &format!("empty TestReqID, check={check} ({})", bs.as_str()),
                cfg,
            )
            .echo()
            .run(&expand(&steps, bs));
        }
    }
}

/// On the NO_CHECK_FIELDS_HAVE_VALUES session an order with an empty Text
/// is echoed with it, and a ResendRequest sends that echo again as it
/// was, empty field and all (not a gap fill).
#[test]
fn an_echo_with_an_empty_field_is_resent_as_it_was() {
    for &bs in V3 {
        let Some((session, app)) = dictionaries(bs) else {
            return;
        };
        let mut cfg = acceptance_config(bs);
        cfg.validator = Some(std::sync::Arc::new(
            fixcore::dictionary::validate::Validator::new(
                session,
                app,
                fixcore::settings::Validation {
                    fields_have_values: false,
                    ..fixcore::settings::Validation::default()
                },
            ),
        ));
        let order = "11=ID|21=3|38=100|40=1|54=1|55=INTC|58=|60=20261123-12:00:00|";
        let steps = format!(
            "{}
             > 8={{BS}}|35=D|34=2|49=TW|52=NOW|56=ISLD|{order}
             < 8={{BS}}|35=D|34=2|49=ISLD|52=TIME|56=TW|{order}
             > 8={{BS}}|35=2|34=3|49=TW|52=NOW|56=ISLD|7=2|16=0|
             < 8={{BS}}|35=D|34=2|43=Y|49=ISLD|52=TIME|56=TW|122=TIME|{order}
             {}",
            logon(30),
            peer_logout(4, 3)
        );
        Script::new(&format!("resend empty field ({})", bs.as_str()), cfg)
            .echo()
            .run(&expand(&steps, bs));
    }
}

/// An acceptor given `Username`/`Password` for the session.
fn guarded(bs: BeginString) -> Config {
    let mut cfg = config(bs, Role::Acceptor);
    cfg.credentials = fixcore::session::machine::Credentials {
        username: Some("trader1".into()),
        password: Some("s3cret".into()),
    };
    cfg
}

#[test]
fn a_logon_with_the_right_credentials_is_answered_without_them() {
    for &bs in ALL {
        let steps = expand(
            "connect
             > 8={BS}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|553=trader1|554=s3cret|{APPL}
             < 8={BS}|35=A|34=1|49=ISLD|52=TIME|56=TW|98=0|108=30|{APPL}
             logged-on
             seqs 2 2",
            bs,
        );
        Script::new(&format!("credentials ok ({})", bs.as_str()), guarded(bs)).run(&steps);
    }
}

/// QuickFIX's RejectLogon: a Logout with the reason, the connection
/// closed, the Logon not counted; the same answer whichever field is
/// wrong or missing.
#[test]
fn a_logon_with_wrong_or_missing_credentials_is_refused_with_a_logout() {
    for creds in [
        "553=trader1|554=guess|",
        "553=trader2|554=s3cret|",
        "553=trader1|",
        "554=s3cret|",
        "",
        "553=trader1|554=s3cret0|",
    ] {
        for &bs in FROM_42 {
            let steps = expand(
                &format!(
                    "connect
                     > 8={{BS}}|35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|{creds}{{APPL}}
                     < 8={{BS}}|35=5|34=1|49=ISLD|52=TIME|56=TW|58=Invalid username or password|
                     disconnected
                     seqs 2 1"
                ),
                bs,
            );
            Script::new(
                &format!("credentials `{creds}` ({})", bs.as_str()),
                guarded(bs),
            )
            .run(&steps);
        }
    }
}

#[test]
fn an_initiator_sends_its_credentials_on_logon() {
    for &bs in ALL {
        let mut cfg = config(bs, Role::Initiator);
        cfg.credentials = fixcore::session::machine::Credentials {
            username: Some("trader1".into()),
            password: Some("s3cret".into()),
        };
        let steps = expand(
            "connect
             < 8={BS}|35=A|34=1|49=TW|52=TIME|56=ISLD|98=0|108=30|553=trader1|554=s3cret|{APPL}
             > 8={BS}|35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|{APPL}
             logged-on
             seqs 2 2",
            bs,
        );
        Script::new(&format!("initiator credentials ({})", bs.as_str()), cfg).run(&steps);
    }
}
