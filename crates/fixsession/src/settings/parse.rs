//! Reading a settings file's text: sections and `Key=Value` lines, each
//! key checked against [`KEYS`](super::KEYS) (refused with a suggestion,
//! or accepted with a warning when perfkit does not act on it), each
//! `[SESSION]` resolved over `[DEFAULT]`, and what the sessions must not
//! share (a session identity, store and log files, one listener's socket
//! settings) refused.

use std::collections::BTreeMap;

use super::resolve::resolve;
use super::{
    ConnectionType, FileLogSettings, SessionFiles, SessionSettings, Settings, SettingsError,
    SettingsWarning, Treatment, keys,
};

/// Each key's value and the line it was written on, by the key as
/// written (a numbered family's members, `SocketConnectHost2`, are
/// keys of their own).
pub(super) type Entries = BTreeMap<String, (String, usize)>;

/// A settings file's sections as written, before any is resolved.
#[derive(Debug)]
struct Sections {
    default: Option<Entries>,
    /// (header line, entries) for each [SESSION].
    sessions: Vec<(usize, Entries)>,
    /// A warning per key perfkit reads but does not act on.
    warnings: Vec<SettingsWarning>,
}

impl Settings {
    /// Reads a settings file's text.
    pub fn parse(text: &str) -> Result<Settings, SettingsError> {
        let Sections {
            default,
            sessions,
            mut warnings,
        } = sections(text)?;
        if sessions.is_empty() {
            return Err(SettingsError::NoSession);
        }
        let default = default.unwrap_or_default();
        let global_log = default.get("FileLogPath").map(|(path, _)| FileLogSettings {
            path: path.into(),
            backup_path: default.get("FileLogBackupPath").map(|(b, _)| b.into()),
            heartbeats: true,
        });
        let mut out: Vec<SessionSettings> = Vec::with_capacity(sessions.len());
        let mut files = SessionFiles::new();
        // Each `AppDataDictionary.<version>` key (its line), and whether a
        // session validates with it.
        let mut versioned: BTreeMap<usize, (String, bool, Treatment)> = BTreeMap::new();
        for (line, own) in sessions {
            let mut merged = default.clone();
            merged.extend(own);
            let s = resolve(line, &merged)?;
            note_versioned_dictionaries(&mut versioned, &merged, &s);
            let id = s.id();
            if let Some(prev) = out.iter().find(|p| p.id() == id) {
                return Err(SettingsError::DuplicateSession {
                    line,
                    first: prev.line,
                    id,
                });
            }
            claim_files(&mut files, &s, &out)?;
            one_listener_per_port(line, &s, &out)?;
            out.push(s);
        }
        // QuickFIX picks an application message's dictionary by its
        // ApplVerID; perfkit validates with one per session, so the
        // others would be read and never used: say so, as for any key
        // perfkit does not act on.
        for (line, (key, used, treatment)) in versioned {
            if !used {
                warnings.push(SettingsWarning {
                    line,
                    more_lines: Vec::new(),
                    key,
                    treatment,
                });
            }
        }
        warnings.sort_by_key(|w| w.line);
        Ok(Settings {
            sessions: out,
            warnings,
            global_log,
        })
    }
}

/// One listener serves every acceptor session of a port, so they must
/// agree on how it is made: `s` (from `line`) against the sessions before.
fn one_listener_per_port(
    line: usize,
    s: &SessionSettings,
    before: &[SessionSettings],
) -> Result<(), SettingsError> {
    if s.connection_type == ConnectionType::Acceptor
        && let Some(first) = before.iter().find(|p| {
            p.connection_type == ConnectionType::Acceptor
                && p.socket_accept_port == s.socket_accept_port
        })
        && (first.socket_accept_address != s.socket_accept_address
            || first.socket_send_buffer_size != s.socket_send_buffer_size
            || first.socket_receive_buffer_size != s.socket_receive_buffer_size
            || first.tls != s.tls)
    {
        return Err(SettingsError::Inconsistent {
            line,
            why: "the acceptor sessions of one SocketAcceptPort must agree on \
                  SocketAcceptAddress, SocketSendBufferSize, SocketReceiveBufferSize \
                  and their TLS keys",
        });
    }
    Ok(())
}

/// Reads `text` into its sections, each key checked against the table
/// (an unknown one refused, one perfkit does not act on warned of) and
/// written once per section.
fn sections(text: &str) -> Result<Sections, SettingsError> {
    let mut default: Option<Entries> = None;
    let mut sessions: Vec<(usize, Entries)> = Vec::new();
    let mut warnings: Vec<SettingsWarning> = Vec::new();
    // Which section the next key goes to: None before any header,
    // Some(None) = DEFAULT, Some(Some(i)) = sessions[i].
    let mut current: Option<Option<usize>> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(rest) = t.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(SettingsError::Syntax {
                    line,
                    text: t.to_string(),
                });
            };
            // QuickFIX compares section names case-insensitively.
            match name.trim().to_ascii_uppercase().as_str() {
                "DEFAULT" => {
                    if default.is_some() {
                        return Err(SettingsError::DuplicateDefault { line });
                    }
                    default = Some(Entries::new());
                    current = Some(None);
                }
                "SESSION" => {
                    sessions.push((line, Entries::new()));
                    current = Some(Some(sessions.len() - 1));
                }
                _ => {
                    return Err(SettingsError::UnknownSection {
                        line,
                        name: name.trim().to_string(),
                    });
                }
            }
            continue;
        }
        let Some((k, v)) = t.split_once('=') else {
            return Err(SettingsError::Syntax {
                line,
                text: t.to_string(),
            });
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(SettingsError::Syntax {
                line,
                text: t.to_string(),
            });
        }
        let Some(known) = keys::find(k) else {
            return Err(SettingsError::UnknownKey {
                line,
                key: k.to_string(),
                suggestion: keys::suggest(k),
            });
        };
        // Kept under the table's spelling: QuickFIX reads keys in any
        // case, and `socketacceptport` and `SocketAcceptPort` in one
        // section are the same key written twice.
        let k = keys::canonical(k).expect("a known key has a spelling");
        let k = k.as_str();
        let entries = match current {
            None => {
                return Err(SettingsError::OutsideSection {
                    line,
                    key: k.to_string(),
                });
            }
            Some(None) => default.get_or_insert_with(Entries::new),
            Some(Some(s)) => &mut sessions[s].1,
        };
        if let Some((_, first)) = entries.get(k) {
            return Err(SettingsError::RepeatedKey {
                line,
                first: *first,
                key: k.to_string(),
            });
        }
        entries.insert(k.to_string(), (v.to_string(), line));
        if known.treatment != Treatment::Honoured {
            match warnings.iter_mut().find(|w| w.key == k) {
                Some(w) => w.more_lines.push(line),
                None => warnings.push(SettingsWarning {
                    line,
                    more_lines: Vec::new(),
                    key: k.to_string(),
                    treatment: known.treatment,
                }),
            }
        }
    }
    Ok(Sections {
        default,
        sessions,
        warnings,
    })
}

/// Notes in `versioned` each `AppDataDictionary.<version>` key of a
/// session's `merged` entries, and whether session `s` validates with it:
/// only a FIXT.1.1 session without a plain `AppDataDictionary` does, with
/// the one of its DefaultApplVerID.
fn note_versioned_dictionaries(
    versioned: &mut BTreeMap<usize, (String, bool, Treatment)>,
    merged: &Entries,
    s: &SessionSettings,
) {
    let chosen = match (
        merged.contains_key("AppDataDictionary"),
        s.default_appl_ver_id,
    ) {
        (false, Some(v)) => Some(format!("AppDataDictionary.{}", v.name())),
        _ => None,
    };
    let why = if s.default_appl_ver_id.is_none() {
        Treatment::NoEffect(
            "only a FIXT.1.1 session reads application dictionaries; this BeginString's \
             messages are validated with DataDictionary",
        )
    } else {
        Treatment::NotYet(
            "a FIXT session validates every application message with one dictionary, \
             AppDataDictionary or else the one named for its DefaultApplVerID, whatever \
             ApplVerID(1128) the message carries",
        )
    };
    for (key, (_, line)) in merged.range("AppDataDictionary.".to_string()..) {
        if !key.starts_with("AppDataDictionary.") {
            break;
        }
        let used = chosen.as_deref() == Some(key.as_str());
        let entry = versioned
            .entry(*line)
            .or_insert_with(|| (key.clone(), false, why));
        entry.1 |= used;
    }
}

/// Claims session `s`'s store and log files in `files`; refused when
/// one of `earlier` (the sessions read before it) already names them.
/// Templates name no files until a Logon gives them CompIDs; the acceptor
/// checks those then.
fn claim_files(
    files: &mut SessionFiles,
    s: &SessionSettings,
    earlier: &[SessionSettings],
) -> Result<(), SettingsError> {
    use crate::id::SessionId;
    if s.acceptor_template {
        return Ok(());
    }
    files.claim(s).map_err(|shared| SettingsError::SharedFiles {
        line: s.line,
        first: earlier
            .iter()
            .find(|p| SessionId::of(p) == *shared.owner)
            .map_or(0, |p| p.line),
        id: SessionId::of(s).to_string(),
        other: shared.owner.to_string(),
        what: shared.what,
        path: shared.path.display().to_string(),
        key: shared.key,
    })
}
