//! The report schema as the integration tests check it: every `--json`
//! document a subcommand prints must validate, and a failure lists each
//! error with the place in the document it points at.

use serde_json::Value;

/// A validator for `perfkit::report::SCHEMA`.
pub fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(perfkit::report::SCHEMA).expect("the schema is JSON");
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
