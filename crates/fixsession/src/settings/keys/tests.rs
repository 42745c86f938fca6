use super::*;

fn count(list: Lists) -> usize {
    KEYS.iter().filter(|k| k.lists.contains(list)).count()
}

/// The table holds each list whole: as many names as each source has
/// (counted there with the tag and file named in the module's
/// documentation), and each name once.
#[test]
fn the_table_holds_each_published_list() {
    assert_eq!(count(Lists::CPP_1_15_1), 107);
    assert_eq!(count(Lists::CPP_MASTER), 113);
    assert_eq!(count(Lists::QFJ_2_3), 139);
    assert_eq!(count(Lists::PERFKIT), 9);
    assert_eq!(KEYS.len(), 217);
    for k in KEYS.iter().filter(|k| k.lists.contains(Lists::CPP_1_15_1)) {
        assert!(
            k.lists.contains(Lists::CPP_MASTER),
            "{} left master",
            k.name
        );
    }
    let added: Vec<&str> = KEYS
        .iter()
        .filter(|k| k.lists.contains(Lists::CPP_MASTER) && !k.lists.contains(Lists::CPP_1_15_1))
        .map(|k| k.name)
        .collect();
    assert_eq!(
        added,
        [
            "SendNextExpectedMsgSeqNum",
            "NonStopSession",
            "HostSelectionPolicy",
            "HostSelectionPolicyPriorityStartOverInterval",
            "AllowedRemoteAddresses",
            "TLSCipherSuites"
        ]
    );
    for (i, k) in KEYS.iter().enumerate() {
        assert!(
            KEYS[..i].iter().all(|o| o.name != k.name),
            "{} twice",
            k.name
        );
        // Perfkit's own keys are in no published list, and the others in
        // at least one.
        assert_eq!(
            k.lists == Lists::PERFKIT,
            k.lists.contains(Lists::PERFKIT),
            "{}",
            k.name
        );
    }
}

#[test]
fn numbered_families_match_their_members_only() {
    let host = find("SocketConnectHost2").unwrap();
    assert_eq!(host.name, "SocketConnectHost<n>");
    assert_eq!(find("SocketConnectHost").unwrap().name, "SocketConnectHost");
    assert_eq!(find("LogonTag12").unwrap().name, "LogonTag<n>");
    for not in [
        "SocketConnectHost0",
        "SocketConnectHost01",
        "SocketConnectHostX",
        "LogonTag-1",
    ] {
        assert_eq!(find(not), None, "{not}");
    }
    // Any case, as QuickFIX/C++ reads keys; the table's spelling back.
    assert_eq!(find("heartbtint").unwrap().name, "HeartBtInt");
    assert_eq!(
        canonical("socketconnecthost2").unwrap(),
        "SocketConnectHost2"
    );
    assert_eq!(
        canonical("appdatadictionary.FIX.4.4").unwrap(),
        "AppDataDictionary.FIX.4.4"
    );
    assert_eq!(canonical("AppDataDictionary.FIX.4.9"), None);
    assert_eq!(canonical("DataDictionary.FIX.4.4"), None);
}

#[test]
fn a_misspelling_gets_the_closest_known_key() {
    for (typed, meant) in [
        ("FileLogPth", "FileLogPath"),
        ("heartbtint", "HeartBtInt"),
        ("HeartbtInt", "HeartBtInt"),
        ("HEARTBTINT", "HeartBtInt"),
        ("ResetOnLogn", "ResetOnLogon"),
        ("SocketConectHost2", "SocketConnectHost2"),
        ("socketconnectport3", "SocketConnectPort3"),
        ("SocketConnectHost0", "SocketConnectHost"),
        ("TargetCompId", "TargetCompID"),
        ("ValidateFeldsOutOfOrdr", "ValidateFieldsOutOfOrder"),
    ] {
        assert_eq!(suggest(typed).as_deref(), Some(meant), "{typed}");
    }
    // Nothing close: no guess.
    for typed in ["Color", "Bogus", "MyOwnSetting", "X"] {
        assert_eq!(suggest(typed), None, "{typed}");
    }
}

/// docs/fix.md's settings table names exactly the keys of [`KEYS`], each
/// once, and says of each what the code does: a key that has no effect
/// reads "no effect:", one not supported yet "not yet:", and a honoured
/// one neither.
#[test]
fn the_documented_table_is_the_code_table() {
    let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/fix.md"));
    let start = doc
        .find("| key | default | what perfkit does with it |")
        .expect("docs/fix.md has the settings table");
    let mut documented: Vec<(String, &str)> = Vec::new();
    for row in doc[start..].lines().skip(2) {
        let Some(row) = row.strip_prefix('|') else {
            break;
        };
        let cells: Vec<&str> = row.split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 3, "{row}");
        let what = cells[2];
        // Backquoted names in the first cell.
        for name in cells[0].split('`').skip(1).step_by(2) {
            documented.push((name.to_string(), what));
        }
    }
    for (name, what) in &documented {
        let key = KEYS
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("docs/fix.md documents {name}, which KEYS lacks"));
        let said = if what.starts_with("**no effect**:") {
            "no effect"
        } else if what.starts_with("**not yet**:") {
            "not yet"
        } else {
            "honoured"
        };
        let is = match key.treatment {
            Treatment::Honoured => "honoured",
            Treatment::NoEffect(_) => "no effect",
            Treatment::NotYet(_) => "not yet",
        };
        assert_eq!(said, is, "docs/fix.md on {name}");
        assert_eq!(
            documented.iter().filter(|(n, _)| n == name).count(),
            1,
            "{name} documented twice"
        );
    }
    for k in KEYS {
        assert!(
            documented.iter().any(|(n, _)| n == k.name),
            "docs/fix.md does not document {}",
            k.name
        );
    }
}

/// Every QuickFIX/C++ key (1.15.1's and master's) names, in
/// `meaning.txt`, at least one test that shows what it means, and every
/// test named there exists: a test function (`fn name` in that file under
/// `crates/`) or a session script. A key added to the table without a
/// test of its meaning, or a test renamed away from under its key, fails
/// here.
#[test]
fn every_quickfix_cpp_key_names_a_test_of_its_meaning() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let ledger = include_str!("meaning.txt");
    let mut named: Vec<&str> = Vec::new();
    for line in ledger
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (key, tests) = line.split_once(':').expect("KEY: tests");
        let tests: Vec<&str> = tests.split_whitespace().collect();
        assert!(!tests.is_empty(), "{key}: no test named");
        for t in tests {
            let (file, function) = match t.split_once("::") {
                Some((f, n)) => (f, Some(n)),
                None => (t, None),
            };
            let text = std::fs::read_to_string(crates.join(file))
                .unwrap_or_else(|e| panic!("{key}: {file}: {e}"));
            if let Some(f) = function {
                let found = text.match_indices(&format!("fn {f}")).any(|(at, m)| {
                    !text[at + m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                });
                assert!(found, "{key}: no `fn {f}` in {file}");
            } else {
                assert!(file.ends_with(".script"), "{key}: {t} names no test");
            }
        }
        named.push(key);
    }
    let cpp = Lists(C | M);
    for k in KEYS.iter().filter(|k| k.lists.0 & cpp.0 != 0) {
        assert!(
            named.contains(&k.name),
            "{}: a QuickFIX/C++ key with no test of its meaning in meaning.txt",
            k.name
        );
    }
    assert_eq!(named.len(), 113, "one line per QuickFIX/C++ key");
}
