//! The report schema as the integration tests check it: every `--json`
//! document a subcommand prints must validate, and a failure lists each
//! error with the place in the document it points at.

#![allow(dead_code)] // each test file uses its own subset

use serde_json::Value;
use std::process::Output;

/// A validator for `perfkit_report::SCHEMA`.
pub fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(perfkit_report::SCHEMA).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

/// Fails the test, naming every error and where it is, unless `doc`
/// validates against the report schema.
pub fn assert_valid(doc: &Value) {
    let errors: Vec<String> = validator()
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The one JSON document a `--json` run printed on stdout (nothing else,
/// and nothing but whitespace after it), checked against the report schema.
pub fn report(out: &Output) -> Value {
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document on stdout ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_valid(&doc);
    doc
}

/// The first section of `doc` whose name starts with `prefix`; fails the
/// test, naming the sections there are, if there is none.
pub fn section<'a>(doc: &'a Value, prefix: &str) -> &'a Value {
    let sections = doc["sections"].as_array().expect("a sections array");
    let names: Vec<&str> = sections
        .iter()
        .map(|s| s["name"].as_str().expect("every section has a name"))
        .collect();
    match names.iter().position(|n| n.starts_with(prefix)) {
        Some(i) => &sections[i],
        None => panic!("no section named {prefix:?}…; the sections are {names:?}"),
    }
}
