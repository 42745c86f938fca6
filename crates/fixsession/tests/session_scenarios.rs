//! Session-layer scenarios as data. Each `session/*.script` file is one
//! behaviour of the session layer written as wire messages, "the
//! counterparty sends this, the session must send exactly that", the way
//! QuickFIX keeps its acceptance tests in `.def` files. The language (its
//! `@` header lines, steps, placeholders and version guards) is described
//! in `session/README.md`, next to the scripts.
//!
//! This file is their interpreter. It reads a script whole before running
//! any of it, so a line it cannot read fails with the file and line number;
//! then runs it once per version the script names, against a [`Session`]
//! over a [`MemoryStore`] with a clock of its own. Messages sent to the
//! session get their BodyLength and CheckSum here, and those it sends are
//! checked with the same byte counting and summing, written here rather
//! than borrowed from the library under test.
//!
//! [`scripts!`] lists the scripts and makes each a test of its own name
//! (`script::<file name>`), so a failure names its script;
//! `every_script_in_the_folder_is_listed` fails on a file the list lacks,
//! so a new script cannot be skipped without anyone noticing. What a
//! script cannot state (a store another process wrote, sub-second clocks)
//! is tested in Rust at the end of this file.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use perfkit_testkit::fix_wire::{self as wire, quickfix_spec};

use fixcore::dictionary::DataDictionary;
use fixcore::dictionary::validate::Validation;
use fixcore::dictionary::validate::Validator;
use fixcore::frame::Framer;
use fixcore::value::UtcTimestamp;
use fixcore::version::BeginString;
use fixsession::app::{Application, Delivered, Echo};
use fixsession::machine::{Config, Credentials, Output, Role, Session};
use fixsession::schedule::TimeWindow;
use fixsession::schedule::{TimeOfDay, Weekday};
use fixsession::settings::{ApplVerId, SessionSettings, Settings};
use fixsession::store::{MemoryStore, SessionStore};

/// 2026-11-23 12:00:00 UTC, a Monday: the scripts' clock at the start.
const T0: i64 = 1_795_435_200 * 1_000_000_000;

/// The scripts' folder, relative to this crate (as failures name files).
const FOLDER: &str = "tests/session";

/// Lists every script of [`FOLDER`], each (without `.script`) becoming
/// the test `script::<name>`, and [`LISTED`] for the check that the list
/// and the folder agree.
macro_rules! scripts {
    ($($name:ident)*) => {
        /// One test per script, named after its file.
        mod script {
            $(
                #[test]
                fn $name() {
                    super::run_script(stringify!($name));
                }
            )*
        }

        /// The scripts `scripts!` runs.
        const LISTED: &[&str] = &[$(stringify!($name)),*];
    };
}

// In alphabetical order (checked), so additions from parallel branches
// land in different places and merge cleanly.
scripts! {
    a_comp_id_that_does_not_match_after_logon_is_rejected_and_logged_out
    a_duplicate_sent_after_its_original_time_is_rejected
    a_first_message_that_is_not_a_logon_disconnects
    a_fix_4_0_initiator_resets_without_asking
    a_fixt_logon_without_default_appl_ver_id_is_dropped
    a_gap_fill_below_the_expected_number_is_ignored_with_poss_dup_and_ends_the_session_without
    a_gap_fill_numbered_above_the_expected_number_asks_for_the_gap
    a_gap_fill_numbered_as_expected_moves_the_number_on
    a_gap_filled_by_plain_messages_releases_the_queue
    a_gap_is_asked_for_and_queued_messages_follow_the_fill_in_order
    a_garbled_message_is_dropped_without_using_a_number
    a_group_count_of_zero_with_no_entries_is_valid
    a_group_count_that_does_not_match_its_entries_is_rejected
    a_logon_ahead_of_the_expected_number_is_answered_then_the_gap_asked_for
    a_logon_numbered_too_low_ends_the_session
    a_logon_outside_session_time_is_logged_out
    a_logon_with_a_bad_sending_time_is_dropped_unanswered
    a_logon_with_a_longer_password_is_refused
    a_logon_with_a_wrong_body_length_is_dropped_unanswered
    a_logon_with_a_wrong_password_is_refused
    a_logon_with_a_wrong_username_is_refused
    a_logon_with_reset_seq_num_flag_on_a_live_session_resets_it
    a_logon_with_reset_seq_num_flag_starts_both_sides_at_one
    a_logon_with_the_right_credentials_is_answered_without_them
    a_logon_with_the_wrong_comp_id_is_dropped_unanswered
    a_logon_without_a_password_is_refused
    a_logon_without_a_username_is_refused
    a_logon_without_credentials_is_refused
    a_memory_store_window_resends_its_window_and_gap_fills_older_numbers
    a_message_of_another_version_is_answered_with_a_logout
    a_message_whose_first_three_fields_are_out_of_order_is_ignored
    a_message_without_msg_seq_num_is_rejected_without_ref_seq_num
    a_msg_seq_num_of_u64_max_is_refused
    a_number_too_low_without_poss_dup_ends_the_session
    a_poss_dup_below_the_expected_number_is_ignored
    a_poss_resend_order_already_seen_is_dropped_by_the_echo
    a_poss_resend_order_not_seen_is_processed
    a_quiet_session_sends_heartbeats_every_interval
    a_received_reject_only_uses_its_number
    a_reject_reverses_the_routing_fields
    a_repeated_tag_is_rejected
    a_resend_mixes_gap_fills_for_admin_runs_with_resent_orders
    a_resend_of_orders_only_sends_them_all_again
    a_resend_request_is_served_with_gap_fills_for_admin_messages
    a_resend_request_out_of_sequence_is_served_and_not_counted
    a_resent_message_that_fails_validation_is_rejected_and_the_queue_goes_on
    a_second_logon_on_a_live_session_disconnects
    a_sequence_reset_lower_than_expected_is_rejected_without_a_tag
    a_sequence_reset_moves_the_expected_number_up
    a_sequence_reset_to_the_expected_number_changes_nothing
    a_sequence_reset_to_the_largest_number_delivers_one_order_under_it
    a_sequence_reset_to_u64_max_is_refused
    a_silent_peer_gets_a_test_request_then_is_disconnected
    a_tag_not_defined_for_the_message_type_is_rejected
    a_tag_without_a_value_is_rejected
    a_test_request_goes_out_after_1_2_intervals_and_2_4_disconnect
    a_test_request_is_answered_with_its_id
    a_valid_heartbeat_uses_its_number
    a_value_in_the_wrong_format_is_rejected
    a_weekly_session_runs_from_its_start_day_to_its_end_day
    a_wrong_body_length_drops_the_message_and_what_it_swallows
    a_wrong_checksum_is_ignored_without_using_a_number
    allow_unknown_msg_fields_y_takes_a_field_the_message_type_lacks
    an_echo_with_an_empty_field_is_resent_as_it_was
    an_empty_routing_field_is_not_reversed
    an_empty_test_req_id_is_echoed_when_empty_values_are_allowed
    an_empty_test_req_id_is_rejected
    an_initiator_answers_a_reset_it_did_not_ask_for
    an_initiator_gives_up_when_no_logon_reply_comes
    an_initiator_keeps_the_heartbeat_it_proposed
    an_initiator_logs_on_and_out
    an_initiator_recovers_a_gap_from_the_acceptor
    an_initiator_resends_its_orders_on_request
    an_initiator_sends_its_credentials_on_logon
    an_initiator_waits_for_its_logon_time
    an_initiator_with_reset_on_logout_asks_for_a_reset_and_starts_over
    an_invalid_msg_type_is_rejected_with_reason_11
    an_overnight_window_does_not_hold_midday
    an_overnight_window_of_23_hours_holds_midday
    an_unexpected_begin_string_gets_a_logout_then_the_connection_ends
    an_unsupported_application_message_gets_a_business_reject
    an_unsupported_message_type_gets_a_business_reject
    any_comp_id_that_does_not_match_is_rejected_and_logged_out
    application_messages_are_resent_with_poss_dup_and_their_original_time
    application_messages_wait_for_the_logon
    before_fix_4_2_a_reject_names_the_tag_in_its_text
    before_fix_4_2_a_resend_request_runs_to_999999
    before_fix_4_2_an_unsupported_type_gets_a_reject_with_text
    before_the_logon_only_sequence_resets_and_rejects_are_taken
    check_comp_id_n_takes_a_foreign_sender_comp_id
    dictionary_accepts_a_valid_order
    dictionary_rejects_a_group_count_that_does_not_match
    dictionary_rejects_a_missing_required_tag
    dictionary_rejects_a_repeated_tag_with_a_reason_from_fix_4_4
    dictionary_rejects_a_tag_not_defined_for_the_message_type
    dictionary_rejects_a_tag_without_a_value
    dictionary_rejects_a_value_in_the_wrong_format
    dictionary_rejects_a_value_out_of_range
    dictionary_rejects_an_invalid_msg_type
    dictionary_rejects_an_invalid_tag_number
    extreme_heart_bt_int_and_sending_time_do_not_overflow
    fixt_dictionaries_named_by_their_keys_validate
    garbled_header_tags_are_ignored_like_garbled_frames
    garbled_messages_are_ignored_and_their_numbers_asked_for_again
    group_counts_of_zero_pass_validation_and_echo
    header_and_body_fields_in_another_order_are_accepted
    header_fields_after_body_fields_are_rejected
    heartbeats_flow_on_silence_and_a_test_request_is_answered
    logon_days_gate_logons_in_a_weekly_session
    logon_time_gates_logons_and_ends_the_logged_on_session
    logout_timeout_sets_how_long_our_logout_waits
    max_latency_sets_how_far_sending_time_may_stray
    messages_numbered_in_sequence_are_taken_silently
    missing_required_fields_are_rejected_naming_the_tag
    next_expected_msg_seq_num_above_ours_ends_the_session
    next_expected_msg_seq_num_below_ours_brings_a_retransmission
    one_outstanding_resend_request_is_enough_by_default
    only_admin_messages_are_resent_as_one_gap_fill
    our_logout_is_answered_and_the_session_ends
    our_logout_waits_for_the_reply_then_times_out
    poss_dup_is_ignored_when_already_received_and_processed_when_not
    poss_dup_with_orig_sending_time_after_sending_time_is_rejected_and_logged_out
    poss_dup_without_orig_sending_time_is_rejected_and_the_number_kept
    redundant_resend_requests_are_sent_when_configured
    resend_requests_crossing_each_other_are_both_served
    reset_on_disconnect_starts_the_next_connection_at_one
    sending_time_far_from_the_clock_is_rejected
    sending_time_two_minutes_early_or_late_is_rejected_and_logged_out
    sequence_reset_moves_the_expected_number_and_never_back
    the_end_of_session_time_logs_out_and_resets_the_numbers
    the_logout_handshake_from_the_peer
    undefined_tags_are_rejected_as_invalid_tag_numbers
    use_data_dictionary_n_validates_nothing
    valid_logon_is_answered_and_numbers_advance
    validate_fields_out_of_order_n_takes_header_fields_after_the_body
    validate_user_defined_fields_n_takes_tags_from_5000
    values_outside_the_enumeration_are_rejected
    with_next_expected_msg_seq_num_a_gap_at_logon_is_not_asked_for
    without_a_dictionary_repeated_tags_and_unknown_groups_are_delivered
    without_persisted_messages_a_resend_is_one_gap_fill
    without_reset_settings_numbers_survive_a_reconnect
}

/// A script or a line of one that cannot be read: the 1-based line and why.
#[derive(Debug)]
struct ParseError {
    line: usize,
    why: String,
}

fn error<T>(line: usize, why: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        why: why.into(),
    })
}

/// How a script sets its session up: its `@` lines.
struct Setup {
    /// `@begin`: the versions the script runs under, one run each.
    versions: Vec<BeginString>,
    /// `@role` (acceptor unless given).
    role: Role,
    /// `@app echo`: delivered messages go to [`Echo`].
    echo: bool,
    /// `@validate`: QuickFIX's dictionaries check every message, with
    /// these switches.
    validation: Option<Validation>,
    /// The other directives, each changing one thing of [`Config::new`]'s
    /// defaults.
    settings: Vec<Setting>,
    /// `@settings KEY=VALUE...`: QuickFIX settings keys, read as a
    /// settings file's `[SESSION]` is read (`Settings::parse`, then
    /// `Config::from_settings`) in place of [`Config::new`]'s defaults.
    keys: Vec<String>,
}

/// What a header directive does to the session's configuration.
type Setting = Box<dyn Fn(&mut Config)>;

/// Every header directive and how it is written, for error messages.
const DIRECTIVES: &[(&str, &str)] = &[
    ("begin", "@begin VERSION..."),
    ("role", "@role acceptor|initiator"),
    ("app", "@app echo"),
    ("validate", "@validate [allow-empty-values]"),
    ("reset-on-logon", "@reset-on-logon"),
    ("next-expected-msg-seq-num", "@next-expected-msg-seq-num"),
    ("no-persist-messages", "@no-persist-messages"),
    (
        "session-time",
        "@session-time HH:MM:SS HH:MM:SS [START_DAY END_DAY]",
    ),
    ("credentials", "@credentials USERNAME PASSWORD"),
    ("settings", "@settings KEY=VALUE..."),
];

impl Setup {
    fn new() -> Setup {
        Setup {
            versions: Vec::new(),
            role: Role::Acceptor,
            echo: false,
            validation: None,
            settings: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// Reads `@name args` (`text` without the `@`) on line `line`.
    fn directive(&mut self, line: usize, text: &str) -> Result<(), ParseError> {
        let mut words = text.split_whitespace();
        let name = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        let Some(&(_, usage)) = DIRECTIVES.iter().find(|(n, _)| *n == name) else {
            let known: Vec<&str> = DIRECTIVES.iter().map(|(n, _)| *n).collect();
            return error(
                line,
                format!("unknown directive `@{name}` (known: {})", known.join(", ")),
            );
        };
        match (name, args.as_slice()) {
            ("begin", [_, ..]) => {
                for v in &args {
                    let Some(bs) = BeginString::from_wire(v) else {
                        return error(line, format!("`{v}` is not a BeginString"));
                    };
                    if self.versions.contains(&bs) {
                        return error(line, format!("{v} is listed twice"));
                    }
                    self.versions.push(bs);
                }
            }
            ("role", ["acceptor"]) => self.role = Role::Acceptor,
            ("role", ["initiator"]) => self.role = Role::Initiator,
            ("app", ["echo"]) => self.echo = true,
            ("settings", [_, ..]) => {
                for kv in &args {
                    if !kv.contains('=') || kv.starts_with('=') {
                        return error(line, format!("`{kv}` is not KEY=VALUE"));
                    }
                    self.keys.push(kv.to_string());
                }
            }
            ("validate", []) => self.validation = Some(Validation::default()),
            ("validate", ["allow-empty-values"]) => {
                self.validation = Some(Validation {
                    fields_have_values: false,
                    ..Validation::default()
                });
            }
            _ => match setting(line, name, &args)? {
                Some(apply) => self.settings.push(apply),
                None => return error(line, format!("expected `{usage}`")),
            },
        }
        Ok(())
    }

    /// The session for version `bs`; `None` when the script validates and
    /// QuickFIX's dictionaries are not to be had (the run is skipped, as
    /// `quickfix_spec` has said).
    fn config(&self, bs: BeginString) -> Option<Config> {
        let (ours, theirs) = self.comp_ids();
        let (mut cfg, validation) = if self.keys.is_empty() {
            let cfg = Config {
                default_appl_ver_id: (bs == BeginString::Fixt11).then_some(ApplVerId::Fix50Sp2),
                ..Config::new(self.role, bs, ours, theirs)
            };
            (cfg, self.validation.clone())
        } else {
            let s = self.session_settings(bs, ours, theirs);
            // As the engine loads dictionaries: the files the keys name
            // (from QuickFIX's spec folder) or `@validate`'s, only under
            // UseDataDictionary (the default), with the file's switches.
            let named = match (
                &s.data_dictionary,
                &s.transport_data_dictionary,
                &s.app_data_dictionary,
            ) {
                (Some(d), _, _) => Some((d.clone(), d.clone())),
                (None, Some(t), Some(a)) => Some((t.clone(), a.clone())),
                _ => None,
            };
            let mut cfg = Config::from_settings(&s);
            if s.use_data_dictionary
                && let Some((session, app)) = named
            {
                let v = Validator::new(spec(&session)?, spec(&app)?, s.validation.clone());
                cfg.validator = Some(Arc::new(v));
            }
            let validation = self
                .validation
                .as_ref()
                .filter(|_| s.use_data_dictionary)
                .map(|_| s.validation.clone());
            (cfg, validation)
        };
        for apply in &self.settings {
            apply(&mut cfg);
        }
        if let Some(validation) = validation {
            let (session, app) = dictionaries(bs)?;
            cfg.validator = Some(Arc::new(Validator::new(session, app, validation)));
        }
        Some(cfg)
    }

    /// The session's own CompID and its counterparty's.
    fn comp_ids(&self) -> (&'static str, &'static str) {
        match self.role {
            Role::Acceptor => ("ISLD", "TW"),
            Role::Initiator => ("TW", "ISLD"),
        }
    }

    /// The session's store under version `bs`, as the engine opens one
    /// for a session kept in memory (`PerfkitMemoryStoreWindow` bounds
    /// it).
    fn store(&self, bs: BeginString) -> MemoryStore {
        if self.keys.is_empty() {
            return MemoryStore::default();
        }
        let (ours, theirs) = self.comp_ids();
        MemoryStore::for_session(&self.session_settings(bs, ours, theirs))
    }

    /// The `[SESSION]` of the script's `@settings` keys, under version
    /// `bs` and its role, with what a file must say besides (the CompIDs,
    /// the role's socket keys, a schedule) added when the keys leave it
    /// out: the schedule is `NonStopSession=Y`, [`Config::new`]'s.
    fn session_settings(&self, bs: BeginString, ours: &str, theirs: &str) -> SessionSettings {
        let given = |key: &str| self.keys.iter().any(|kv| kv.split('=').next() == Some(key));
        let mut text = format!(
            "[SESSION]\nBeginString={}\nSenderCompID={ours}\nTargetCompID={theirs}\n",
            bs.as_str()
        );
        let role = match self.role {
            Role::Acceptor => "ConnectionType=acceptor\nSocketAcceptPort=1\n",
            Role::Initiator => {
                "ConnectionType=initiator\nSocketConnectHost=127.0.0.1\nSocketConnectPort=1\n"
            }
        };
        text.push_str(role);
        if self.role == Role::Initiator && !given("HeartBtInt") {
            text.push_str("HeartBtInt=30\n");
        }
        if bs == BeginString::Fixt11 && !given("DefaultApplVerID") {
            text.push_str("DefaultApplVerID=FIX.5.0SP2\n");
        }
        if !["StartTime", "EndTime", "NonStopSession"]
            .iter()
            .any(|k| given(k))
        {
            text.push_str("NonStopSession=Y\n");
        }
        for kv in &self.keys {
            text.push_str(kv);
            text.push('\n');
        }
        let settings = Settings::parse(&text)
            .unwrap_or_else(|e| panic!("@settings: {e}\nthe [SESSION] read:\n{text}"));
        settings.sessions.into_iter().next().expect("one session")
    }
}

/// What session setting directive `name` with `args` does; `None` when
/// it is not one, or not with those arguments.
fn setting(line: usize, name: &str, args: &[&str]) -> Result<Option<Setting>, ParseError> {
    Ok(Some(match (name, args) {
        ("reset-on-logon", []) => Box::new(|c| c.reset_on_logon = true),
        ("next-expected-msg-seq-num", []) => Box::new(|c| c.next_expected_msg_seq_num = true),
        ("no-persist-messages", []) => Box::new(|c| c.persist_messages = false),
        ("session-time", [start, end]) => {
            let w = TimeWindow::daily(time_of_day(line, start)?, time_of_day(line, end)?);
            Box::new(move |c| c.session_time = Some(w.clone()))
        }
        ("session-time", [start, end, first, last]) => {
            let w = TimeWindow::weekly(
                time_of_day(line, start)?,
                time_of_day(line, end)?,
                weekday(line, first)?,
                weekday(line, last)?,
            );
            Box::new(move |c| c.session_time = Some(w.clone()))
        }
        ("credentials", [username, password]) => {
            let credentials = Credentials {
                username: Some(username.to_string()),
                password: Some(password.to_string()),
            };
            Box::new(move |c| c.credentials = credentials.clone())
        }
        _ => return Ok(None),
    }))
}

/// `HH:MM:SS`, as QuickFIX writes StartTime and the like.
fn time_of_day(line: usize, s: &str) -> Result<TimeOfDay, ParseError> {
    let parts: Vec<&str> = s.split(':').collect();
    let n = |i: usize, below: u32| {
        parts
            .get(i)
            .filter(|p| p.len() == 2)
            .and_then(|p| p.parse::<u32>().ok())
            .filter(|&v| v < below)
    };
    match (parts.len(), n(0, 24), n(1, 60), n(2, 60)) {
        (3, Some(h), Some(m), Some(s)) => Ok(TimeOfDay(h * 3600 + m * 60 + s)),
        _ => error(line, format!("`{s}` is not a time of day HH:MM:SS")),
    }
}

/// A day's English name, `Sunday` to `Saturday`.
fn weekday(line: usize, s: &str) -> Result<Weekday, ParseError> {
    const DAYS: [&str; 7] = [
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ];
    match DAYS.iter().position(|&d| d == s) {
        // QuickFIX numbers days from Sunday = 1.
        Some(i) => Ok(Weekday::new(i as u8 + 1).unwrap()),
        None => error(line, format!("`{s}` is not a day (Sunday to Saturday)")),
    }
}

/// QuickFIX 1.15.1's dictionary `file` (see [`quickfix_spec`]).
fn spec(file: &str) -> Option<Arc<DataDictionary>> {
    let path = quickfix_spec()?.join(file);
    let xml = std::fs::read_to_string(path).unwrap();
    Some(Arc::new(DataDictionary::parse(&xml).unwrap()))
}

/// QuickFIX's dictionaries for `bs`: the session one and the application
/// one (the same file before FIXT.1.1).
fn dictionaries(bs: BeginString) -> Option<(Arc<DataDictionary>, Arc<DataDictionary>)> {
    if bs == BeginString::Fixt11 {
        return Some((spec("FIXT11.xml")?, spec("FIX50SP2.xml")?));
    }
    let d = spec(&format!("{}.xml", bs.as_str().replace('.', "")))?;
    Some((d.clone(), d))
}

/// A field of a message the counterparty sends.
#[derive(Debug, Clone)]
enum Sent {
    /// Written as it is (it may not even be `tag=value`: garbling).
    Text(String),
    /// `52=NOW`, `122=NOW-5`: the clock's time, shifted by seconds.
    Now { tag: String, shift: i64 },
}

/// The fields of a `>` line.
fn sent_fields(fields: &str) -> Result<Vec<Sent>, String> {
    fields
        .split('|')
        .filter(|f| !f.is_empty())
        .map(|f| {
            let (tag, value) = f.split_once('=').unwrap_or((f, ""));
            let Some(rest) = value.strip_prefix("NOW") else {
                return Ok(Sent::Text(f.to_string()));
            };
            if tag != "52" && tag != "122" {
                return Err(format!(
                    "`{f}`: NOW is for SendingTime(52) and OrigSendingTime(122)"
                ));
            }
            let shift = match rest.split_at(rest.len().min(1)) {
                ("", _) => Some(0),
                ("-", n) => n.parse::<i64>().ok().map(|n| -n),
                ("+", n) => n.parse().ok(),
                _ => None,
            };
            match shift {
                Some(shift) => Ok(Sent::Now {
                    tag: tag.to_string(),
                    shift,
                }),
                None => Err(format!("`{f}`: expected NOW, NOW-SECONDS or NOW+SECONDS")),
            }
        })
        .collect()
}

/// A complete message from a `>` line's fields (BeginString first), at
/// clock time `now`. BodyLength and CheckSum are added unless the script
/// gives them; a line that does not start with BeginString is taken as it
/// is.
fn frame(fields: &[Sent], now: i64) -> Vec<u8> {
    let parts: Vec<String> = fields
        .iter()
        .map(|f| match f {
            Sent::Text(t) => t.clone(),
            Sent::Now { tag, shift } => {
                format!("{tag}={}", wire::timestamp(now + shift * 1_000_000_000))
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

/// [`frame`] for a `>` line written in Rust.
fn frame_text(fields: &str, now: i64) -> Vec<u8> {
    frame(&sent_fields(fields).unwrap(), now)
}

/// The fields of a sent message after checking its BodyLength and
/// CheckSum by hand, both left out.
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
        .filter(|f| !f.starts_with("9="))
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

/// One step of a script, its arguments read.
#[derive(Debug)]
enum Step {
    /// `connect`
    Connect,
    /// `disconnect`
    Disconnect,
    /// `> fields` (through the framer) or `>! fields` (straight to the
    /// session).
    Receive { fields: Vec<Sent>, framed: bool },
    /// `< fields`
    Expect(Vec<(String, String)>),
    /// `deliver N`
    Deliver(u64),
    /// `reject-unsupported N`
    RejectUnsupported(u64),
    /// `app TYPE|fields` (`taken`) or `app-refused TYPE|fields`.
    App {
        msg_type: String,
        fields: Vec<(u32, String)>,
        taken: bool,
    },
    /// `logout [TEXT]`
    Logout(Option<String>),
    /// `logged-on`, `logged-out`, `disconnected`
    Event(Output),
    /// `wait S`
    Wait(u32),
    /// `nothing`: the session has sent nothing no step has checked (what
    /// a timer must not have done yet).
    Nothing,
    /// `seqs S T`
    Seqs(u64, u64),
}

/// A step with where it was written, for messages.
struct Line {
    number: usize,
    /// The line as run: placeholders replaced, version guard removed.
    text: String,
    step: Step,
}

/// A script read whole: its setup and, for each version, its steps.
struct Script {
    setup: Setup,
    runs: Vec<(BeginString, Vec<Line>)>,
}

impl Script {
    fn parse(text: &str) -> Result<Script, ParseError> {
        let mut setup = Setup::new();
        let mut seen: Vec<&str> = Vec::new();
        // (line number, versions it is guarded to, text)
        let mut body: Vec<(usize, Option<Vec<BeginString>>, &str)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let number = i + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(directive) = line.strip_prefix('@') {
                if !body.is_empty() {
                    return error(number, "`@` lines come before the first step");
                }
                let name = directive.split_whitespace().next().unwrap_or("");
                if seen.contains(&name) {
                    return error(number, format!("`@{name}` given twice"));
                }
                setup.directive(number, directive)?;
                seen.push(name);
                continue;
            }
            if setup.versions.is_empty() {
                return error(number, "a script starts with `@begin VERSION...`");
            }
            let (only, step) = match line.strip_prefix('[') {
                Some(guarded) => {
                    let Some((list, step)) = guarded.split_once(']') else {
                        return error(number, "a version guard is `[VERSION...] step`");
                    };
                    let mut only = Vec::new();
                    for v in list.split_whitespace() {
                        match BeginString::from_wire(v) {
                            Some(bs) if setup.versions.contains(&bs) => only.push(bs),
                            _ => {
                                return error(
                                    number,
                                    format!("`{v}` is not a version @begin lists"),
                                );
                            }
                        }
                    }
                    if only.is_empty() {
                        return error(number, "a version guard names at least one version");
                    }
                    (Some(only), step.trim())
                }
                None => (None, line),
            };
            body.push((number, only, step));
        }
        if setup.versions.is_empty() {
            return error(1, "no `@begin VERSION...` line");
        }
        let mut runs = Vec::new();
        for &bs in &setup.versions {
            let mut steps = Vec::new();
            for (number, only, template) in &body {
                if only.as_ref().is_some_and(|o| !o.contains(&bs)) {
                    continue;
                }
                let text = expand(template, bs);
                if text.contains('{') {
                    return error(*number, "unknown placeholder (there are {BS} and {APPL})");
                }
                let step = parse_step(&text).or_else(|why| error(*number, why))?;
                if setup.echo && matches!(step, Step::Deliver(_) | Step::RejectUnsupported(_)) {
                    return error(
                        *number,
                        "with `@app echo` the echo receives what is delivered, not the script",
                    );
                }
                steps.push(Line {
                    number: *number,
                    text,
                    step,
                });
            }
            runs.push((bs, steps));
        }
        Ok(Script { setup, runs })
    }
}

/// `template` for version `bs`: `{BS}` is its BeginString, `{APPL}` the
/// DefaultApplVerID field a FIXT.1.1 Logon carries (nothing before).
fn expand(template: &str, bs: BeginString) -> String {
    let appl = if bs == BeginString::Fixt11 {
        "1137=9|"
    } else {
        ""
    };
    template
        .replace("{BS}", bs.as_str())
        .replace("{APPL}", appl)
}

/// One step's text (placeholders replaced).
fn parse_step(line: &str) -> Result<Step, String> {
    let (cmd, arg) = line.split_once(' ').unwrap_or((line, ""));
    let arg = arg.trim();
    let none = |step: Step| {
        if arg.is_empty() {
            Ok(step)
        } else {
            Err(format!("`{cmd}` takes no argument"))
        }
    };
    let number = |what: &str| {
        arg.parse::<u64>()
            .map_err(|_| format!("`{cmd}` takes {what}, not `{arg}`"))
    };
    match cmd {
        "connect" => none(Step::Connect),
        "disconnect" => none(Step::Disconnect),
        "logged-on" => none(Step::Event(Output::LoggedOn)),
        "logged-out" => none(Step::Event(Output::LoggedOut)),
        "disconnected" => none(Step::Event(Output::Disconnect)),
        "nothing" => none(Step::Nothing),
        ">" | ">!" => {
            let fields = sent_fields(arg)?;
            if fields.is_empty() {
                return Err(format!("`{cmd}` needs the message's fields"));
            }
            Ok(Step::Receive {
                fields,
                framed: cmd == ">",
            })
        }
        "<" => {
            let mut want = Vec::new();
            for f in arg.split('|').filter(|f| !f.is_empty()) {
                let Some((t, v)) = f.split_once('=') else {
                    return Err(format!("`{f}` is not tag=value"));
                };
                if t == "9" || t == "10" {
                    return Err(format!(
                        "`{f}`: BodyLength and CheckSum are checked by counting, not written"
                    ));
                }
                want.push((t.to_string(), v.to_string()));
            }
            if want.is_empty() {
                return Err("`<` needs the message's fields".into());
            }
            Ok(Step::Expect(want))
        }
        "deliver" => Ok(Step::Deliver(number("a MsgSeqNum")?)),
        "reject-unsupported" => Ok(Step::RejectUnsupported(number("a MsgSeqNum")?)),
        "app" | "app-refused" => {
            let (msg_type, body) = arg.split_once('|').unwrap_or((arg, ""));
            if msg_type.is_empty() {
                return Err(format!("`{cmd}` takes TYPE|fields"));
            }
            let mut fields = Vec::new();
            for f in body.split('|').filter(|f| !f.is_empty()) {
                match f.split_once('=').map(|(t, v)| (t.parse::<u32>(), v)) {
                    Some((Ok(t), v)) => fields.push((t, v.to_string())),
                    _ => return Err(format!("`{f}` is not tag=value")),
                }
            }
            Ok(Step::App {
                msg_type: msg_type.to_string(),
                fields,
                taken: cmd == "app",
            })
        }
        "logout" => Ok(Step::Logout((!arg.is_empty()).then(|| arg.to_string()))),
        "wait" => arg
            .parse()
            .map(Step::Wait)
            .map_err(|_| format!("`wait` takes whole seconds, not `{arg}`")),
        "seqs" => {
            let numbers: Vec<Option<u64>> =
                arg.split_whitespace().map(|n| n.parse().ok()).collect();
            match numbers[..] {
                [Some(s), Some(t)] => Ok(Step::Seqs(s, t)),
                _ => Err(format!("`seqs` takes two numbers, not `{arg}`")),
            }
        }
        _ => Err(format!("unknown step `{line}`")),
    }
}

/// Where script `name` is.
fn path_of(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(FOLDER)
        .join(format!("{name}.script"))
}

/// Reads `session/<name>.script` and runs it under each of its versions.
fn run_script(name: &str) {
    let shown = format!("{FOLDER}/{name}.script");
    let text = std::fs::read_to_string(path_of(name))
        .unwrap_or_else(|e| panic!("{shown}: {e} (listed in `scripts!`, so it should exist)"));
    let script = Script::parse(&text).unwrap_or_else(|e| panic!("{shown}:{}: {}", e.line, e.why));
    for (bs, steps) in &script.runs {
        let Some(cfg) = script.setup.config(*bs) else {
            eprintln!("{shown}: skipped, QuickFIX's dictionaries are not installed");
            return;
        };
        let mut run = Run {
            session: Session::new(cfg, script.setup.store(*bs)),
            now: T0,
            pending: VecDeque::new(),
            framer: Framer::new(1 << 20).session_cut(),
            echo: script.setup.echo.then(Echo::default),
            file: &shown,
            version: bs.as_str(),
        };
        for line in steps {
            run.step(line);
        }
        run.finish();
    }
}

/// One script run under one version: the session, its clock, and what it
/// has produced that no step has checked yet.
struct Run<'a> {
    session: Session<MemoryStore>,
    /// The clock, in nanoseconds since the epoch.
    now: i64,
    pending: VecDeque<Output>,
    framer: Framer,
    echo: Option<Echo>,
    /// The script's file and the version, for messages.
    file: &'a str,
    version: &'static str,
}

impl Run<'_> {
    fn now(&self) -> UtcTimestamp {
        UtcTimestamp {
            unix_nanos: self.now,
        }
    }

    /// `file:line (version)`, where a failure happened.
    fn at(&self, line: &Line) -> String {
        format!("{}:{} ({})", self.file, line.number, self.version)
    }

    /// Takes what the session has produced, handing deliveries to the
    /// echo when there is one (which may produce more).
    fn collect(&mut self) {
        loop {
            let outs: Vec<Output> = self.session.drain().collect();
            if outs.is_empty() {
                return;
            }
            for o in outs {
                match (o, &mut self.echo) {
                    (Output::Log(_) | Output::Reset, _) => {}
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

    /// The next output, which `line` expects.
    fn next(&mut self, line: &Line) -> Output {
        self.collect();
        match self.pending.pop_front() {
            Some(o) => o,
            None => panic!(
                "{}: expected `{}`, the session did nothing",
                self.at(line),
                line.text
            ),
        }
    }

    /// The next output, which must be the delivery of message `n`.
    fn delivered(&mut self, line: &Line, n: u64) -> Vec<u8> {
        match self.next(line) {
            Output::Deliver(b) => {
                let f = fields_of(&b);
                let seq = f.iter().find(|(t, _)| t == "34").unwrap();
                assert_eq!(seq.1, n.to_string(), "{}: delivered", self.at(line));
                b
            }
            other => panic!("{}: expected `{}`, got {other:?}", self.at(line), line.text),
        }
    }

    fn step(&mut self, line: &Line) {
        let now = self.now();
        match &line.step {
            Step::Connect => {
                self.framer = Framer::new(1 << 20).session_cut();
                self.session.on_connect(now).unwrap();
            }
            Step::Disconnect => self.session.on_disconnect().unwrap(),
            Step::Receive { fields, framed } => {
                let msg = frame(fields, self.now);
                if !framed {
                    self.session.on_message(&msg, now).unwrap();
                    return;
                }
                self.framer.push(&msg);
                // As the connection does: what cannot be framed is
                // logged there and never reaches the session.
                while let Some(frame) = self.framer.next_frame() {
                    if let Ok(m) = frame {
                        self.session.on_message(m, now).unwrap();
                    }
                }
            }
            Step::Expect(want) => {
                let got = match self.next(line) {
                    Output::Send(b) => fields_of(&b),
                    other => panic!("{}: expected `{}`, got {other:?}", self.at(line), line.text),
                };
                let ok = got.len() == want.len()
                    && got.iter().zip(want).all(|((gt, gv), (wt, wv))| {
                        gt == wt && (gv == wv || (wv == "TIME" && is_timestamp(gv)))
                    });
                assert!(
                    ok,
                    "{}: expected\n  {}\ngot\n  < {}",
                    self.at(line),
                    line.text,
                    got.iter()
                        .map(|(t, v)| format!("{t}={v}|"))
                        .collect::<String>()
                );
            }
            Step::Deliver(n) => {
                self.delivered(line, *n);
            }
            Step::RejectUnsupported(n) => {
                let msg = self.delivered(line, *n);
                self.session.reject_unsupported(&msg, now).unwrap();
            }
            Step::App {
                msg_type,
                fields,
                taken,
            } => {
                let sent = self
                    .session
                    .send_app(msg_type.as_bytes(), now, |b| {
                        for (t, v) in fields {
                            b.field_str(*t, v);
                        }
                    })
                    .unwrap();
                let what = if *taken { "refused" } else { "taken" };
                assert_eq!(sent, *taken, "{}: `{}` {what}", self.at(line), line.text);
            }
            Step::Logout(text) => self.session.logout(text.as_deref(), now).unwrap(),
            Step::Event(want) => {
                let got = self.next(line);
                assert_eq!(&got, want, "{}: `{}`", self.at(line), line.text);
            }
            Step::Wait(secs) => {
                self.now += i64::from(*secs) * 1_000_000_000;
                let now = self.now();
                self.session.on_tick(now).unwrap();
            }
            Step::Nothing => {
                self.collect();
                assert!(
                    self.pending.is_empty(),
                    "{}: `nothing`, but the session sent {:?}",
                    self.at(line),
                    self.pending
                );
            }
            Step::Seqs(s, t) => {
                self.collect();
                let st = self.session.store();
                assert_eq!(
                    (st.next_sender_seq(), st.next_target_seq()),
                    (*s, *t),
                    "{}: `{}`",
                    self.at(line),
                    line.text
                );
            }
        }
    }

    /// After the last step no output may be left unchecked.
    fn finish(mut self) {
        self.collect();
        assert!(
            self.pending.is_empty(),
            "{} ({}): unexpected output after the script: {:?}",
            self.file,
            self.version,
            self.pending
        );
    }
}

/// The folder holds the listed scripts, all of them, and nothing else but
/// its README: a script nobody lists would never run, and a misnamed one
/// (`x.scirpt`) would not even be looked for.
#[test]
fn every_script_in_the_folder_is_listed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(FOLDER);
    let mut scripts = Vec::new();
    let mut strays = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        match name.strip_suffix(".script") {
            Some(stem) => scripts.push(stem.to_string()),
            None if name == "README.md" => {}
            None => strays.push(name),
        }
    }
    assert!(
        strays.is_empty(),
        "{FOLDER} holds files that are neither scripts (NAME.script) nor its README: {strays:?}"
    );
    let unlisted: Vec<&String> = scripts
        .iter()
        .filter(|s| !LISTED.contains(&s.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "scripts in {FOLDER} that `scripts!` in {} does not list, so nothing runs: {unlisted:?}",
        file!()
    );
    let missing: Vec<&&str> = LISTED
        .iter()
        .filter(|l| !scripts.iter().any(|s| s == *l))
        .collect();
    assert!(
        missing.is_empty(),
        "listed, but not in {FOLDER}: {missing:?}"
    );
    assert!(LISTED.is_sorted(), "keep `scripts!` in alphabetical order");
}

/// A line the interpreter cannot read fails with its line number before
/// anything runs (`run_script` adds the file name).
#[test]
fn a_script_that_cannot_be_read_names_the_line() {
    let cases = [
        (
            "@begin FIX.4.4\nconnect\n\nteleport\n",
            4,
            "unknown step `teleport`",
        ),
        (
            "# a comment\n@begin FIX.4.4\n@colour blue\n",
            3,
            "unknown directive `@colour`",
        ),
        ("@begin FIX.4.4\nwait soon\n", 2, "whole seconds"),
        ("@begin FIX.4.4\nseqs 2\n", 2, "two numbers"),
        (
            "@begin FIX.4.4\n< 8={BS}|35=0|34=2|garbage|\n",
            2,
            "`garbage` is not tag=value",
        ),
        ("@begin FIX.4.4\n> 8={BS}|52=NOW-ish|\n", 2, "NOW-SECONDS"),
        (
            "@begin FIX.4.4\n> 8={BSS}|35=0|\n",
            2,
            "unknown placeholder",
        ),
        (
            "@begin FIX.4.4\n[FIX.4.2] connect\n",
            2,
            "not a version @begin lists",
        ),
        (
            "@begin FIX.4.4\nconnect\n@reset-on-logon\n",
            3,
            "before the first step",
        ),
        (
            "@begin FIX.4.4\n@session-time 25:00:00 13:00:00\n",
            2,
            "not a time of day",
        ),
        (
            "@begin FIX.4.4\n@app echo\nconnect\ndeliver 2\n",
            4,
            "the echo receives",
        ),
        ("connect\n", 1, "starts with `@begin"),
        ("# nothing to run\n@role initiator\n", 1, "no `@begin"),
    ];
    for (text, line, why) in cases {
        let Err(e) = Script::parse(text) else {
            panic!("{text:?} was read");
        };
        assert_eq!(e.line, line, "{text:?}: {}", e.why);
        assert!(e.why.contains(why), "{text:?}: {}", e.why);
    }
}

/// [`Config`] for a Rust-written scenario, as a script's setup makes it.
fn config(bs: BeginString, role: Role) -> Config {
    let mut setup = Setup::new();
    setup.role = role;
    setup.config(bs).unwrap()
}

/// RefreshOnLogon: a standby engine that opened the store before the
/// primary wrote to it reloads it when a Logon arrives, so it expects the
/// primary's numbers; without the setting it expects its stale ones and
/// asks for a resend. The primary is QuickFIX, which takes no lock and
/// rewrites `.seqnums` in place (a second perfkit store on the same
/// files is refused: see the file store's tests). (Two writers on one
/// store: not a script's business.)
#[test]
fn refresh_on_logon_reloads_the_store_another_process_wrote() {
    use fixsession::store::{Durability, FileStore};
    let dir = tempfile::tempdir().unwrap();
    for refresh in [true, false] {
        let path = dir.path().join(format!("FIX.4.4-ISLD-TW-{refresh}"));
        let mut cfg = config(BeginString::Fix44, Role::Acceptor);
        cfg.refresh_on_logon = refresh;
        let mut standby = Session::new(
            cfg,
            FileStore::open(&path, Durability::Process, None).unwrap(),
        );
        // The primary ran the session up to our number 5, theirs 7.
        let mut seqnums = path.as_os_str().to_owned();
        seqnums.push(".seqnums");
        std::fs::write(&seqnums, "0000000005 : 0000000007").unwrap();
        let now = UtcTimestamp { unix_nanos: T0 };
        standby.on_connect(now).unwrap();
        let logon = frame_text("8=FIX.4.4|35=A|34=7|49=TW|52=NOW|56=ISLD|98=0|108=30|", T0);
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
/// insertSendingTime). (A clock between seconds: not a script's.)
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
        let logon = frame_text(
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
